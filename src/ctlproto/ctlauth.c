/*
 * ctlauth: pre-shared-key handshake and frame MACs (ctlauth.h), over
 * libcrypto's HMAC-SHA256 and RAND_bytes.
 */
#include "ctlproto/ctlauth.h"

#include <errno.h>
#include <fcntl.h>
#include <openssl/crypto.h>
#include <openssl/evp.h>
#include <openssl/hmac.h>
#include <openssl/params.h>
#include <openssl/rand.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "common/err.h"

static const uint8_t magic[8] = {'I', 'N', 'A', 'R', 'T', 'C', '1', '\n'};

int inart_ctl_key_load(const char *path, struct inart_ctl_key *key, struct inart_err *err)
{
	struct stat st;
	ssize_t n;
	int fd = open(path, O_RDONLY | O_CLOEXEC), rc = 0;

	memset(key, 0, sizeof(*key));
	if (fd < 0)
		return inart_err_set(err, -errno, "%s: %s", path, strerror(errno));
	if (fstat(fd, &st) < 0 || (st.st_mode & 077) != 0) {
		rc = inart_err_set(err, -EPERM,
				   "%s: a key file must be readable by its owner only (chmod 600)",
				   path);
		goto out;
	}
	n = read(fd, key->k, sizeof(key->k));
	if (n > 0 && key->k[n - 1] == '\n')
		n--;
	if (n < INART_AUTH_KEY_MIN || (size_t)n >= sizeof(key->k)) {
		rc = inart_err_set(err, -EINVAL, "%s: a key has %d to %d bytes", path,
				   INART_AUTH_KEY_MIN, INART_AUTH_KEY_MAX - 1);
		goto out;
	}
	key->len = (size_t)n;
out:
	close(fd);
	if (rc < 0)
		OPENSSL_cleanse(key, sizeof(*key));
	return rc;
}

/* HMAC-SHA256(k, tag a b) into out. */
static void hmac3(const uint8_t *k, size_t klen, char tag, const uint8_t *a, size_t alen,
		  const uint8_t *b, size_t blen, uint8_t out[INART_AUTH_MAC])
{
	uint8_t buf[1 + 2 * INART_AUTH_NONCE];
	unsigned int olen = INART_AUTH_MAC;

	buf[0] = (uint8_t)tag;
	memcpy(buf + 1, a, alen);
	memcpy(buf + 1 + alen, b, blen);
	HMAC(EVP_sha256(), k, (int)klen, buf, 1 + alen + blen, out, &olen);
}

int inart_ctlauth_hello(uint8_t hello[INART_AUTH_HELLO], uint8_t ns[INART_AUTH_NONCE])
{
	if (RAND_bytes(ns, INART_AUTH_NONCE) != 1)
		return -EIO;
	memcpy(hello, magic, sizeof(magic));
	memcpy(hello + sizeof(magic), ns, INART_AUTH_NONCE);
	return 0;
}

int inart_ctlauth_check(const struct inart_ctl_key *key, const uint8_t ns[INART_AUTH_NONCE],
			const uint8_t answer[INART_AUTH_ANSWER], uint8_t proof[INART_AUTH_MAC],
			uint8_t ks[INART_AUTH_MAC])
{
	const uint8_t *nc = answer;
	uint8_t want[INART_AUTH_MAC];

	hmac3(key->k, key->len, 'C', ns, INART_AUTH_NONCE, nc, INART_AUTH_NONCE, want);
	if (CRYPTO_memcmp(want, answer + INART_AUTH_NONCE, INART_AUTH_MAC) != 0)
		return -EACCES;
	hmac3(key->k, key->len, 'S', nc, INART_AUTH_NONCE, ns, INART_AUTH_NONCE, proof);
	hmac3(key->k, key->len, 'K', ns, INART_AUTH_NONCE, nc, INART_AUTH_NONCE, ks);
	return 0;
}

int inart_ctlauth_answer(const struct inart_ctl_key *key, const uint8_t hello[INART_AUTH_HELLO],
			 uint8_t answer[INART_AUTH_ANSWER], uint8_t proof[INART_AUTH_MAC],
			 uint8_t ks[INART_AUTH_MAC])
{
	const uint8_t *ns = hello + sizeof(magic);
	uint8_t *nc = answer;

	if (memcmp(hello, magic, sizeof(magic)) != 0)
		return -EPROTO;
	if (RAND_bytes(nc, INART_AUTH_NONCE) != 1)
		return -EIO;
	hmac3(key->k, key->len, 'C', ns, INART_AUTH_NONCE, nc, INART_AUTH_NONCE,
	      answer + INART_AUTH_NONCE);
	hmac3(key->k, key->len, 'S', nc, INART_AUTH_NONCE, ns, INART_AUTH_NONCE, proof);
	hmac3(key->k, key->len, 'K', ns, INART_AUTH_NONCE, nc, INART_AUTH_NONCE, ks);
	return 0;
}

int inart_ctlauth_mac(const uint8_t ks[INART_AUTH_MAC], int dir, uint64_t seq, const uint8_t *frame,
		      size_t len, uint8_t mac[INART_AUTH_MAC])
{
	EVP_MAC *m = EVP_MAC_fetch(NULL, "HMAC", NULL);
	EVP_MAC_CTX *h = m ? EVP_MAC_CTX_new(m) : NULL;
	OSSL_PARAM params[] = {OSSL_PARAM_construct_utf8_string("digest", (char *)"SHA256", 0),
			       OSSL_PARAM_construct_end()};
	uint8_t head[9];
	size_t olen = 0;
	int rc = 0;

	head[0] = (uint8_t)dir;
	for (int i = 0; i < 8; i++)
		head[1 + i] = (uint8_t)(seq >> (56 - 8 * i));
	if (h == NULL || EVP_MAC_init(h, ks, INART_AUTH_MAC, params) != 1 ||
	    EVP_MAC_update(h, head, sizeof(head)) != 1 || EVP_MAC_update(h, frame, len) != 1 ||
	    EVP_MAC_final(h, mac, &olen, INART_AUTH_MAC) != 1 || olen != INART_AUTH_MAC)
		rc = -ENOMEM;
	EVP_MAC_CTX_free(h);
	EVP_MAC_free(m);
	return rc;
}

int inart_ctlauth_verify(const uint8_t ks[INART_AUTH_MAC], int dir, uint64_t seq,
			 const uint8_t *frame, size_t len, const uint8_t mac[INART_AUTH_MAC])
{
	uint8_t want[INART_AUTH_MAC];

	if (inart_ctlauth_mac(ks, dir, seq, frame, len, want) < 0)
		return -EACCES;
	return CRYPTO_memcmp(want, mac, INART_AUTH_MAC) == 0 ? 0 : -EACCES;
}
