/*
 * ctlauth: authentication of control connections over TCP (the optional
 * listener of the daemons, docs/programs.md "Control over TCP"), with a
 * pre-shared key and OpenSSL's libcrypto (HMAC-SHA256, RAND_bytes).
 *
 * Handshake, before any request:
 *   server -> client  "INARTC1\n" + Ns              (32 random bytes)
 *   client -> server  Nc + HMAC(K, "C" Ns Nc)       (32 random bytes + 32)
 *   server -> client  HMAC(K, "S" Nc Ns)            (the server knows K too)
 * A client whose MAC is wrong is refused (the connection closed before any
 * request is read) and counted.  Both sides then derive a session key
 * Ks = HMAC(K, "K" Ns Nc), and every frame (4-byte length + JSON) carries
 * HMAC(Ks, direction seq frame) after it (32 bytes; seq counts the frames of
 * that direction from 0): a frame altered, replayed, reordered or injected
 * closes the connection.  The frames are not encrypted: what they say
 * (tables, counters) can be read on the wire.
 *
 * Ownership: keys are the caller's structs; nothing is allocated.
 */
#ifndef INART_CTLAUTH_H
#define INART_CTLAUTH_H

#include <stddef.h>
#include <stdint.h>

#include "inart/inart.h"

#define INART_AUTH_NONCE 32
#define INART_AUTH_MAC 32
#define INART_AUTH_HELLO 40  /* magic (8) + Ns */
#define INART_AUTH_ANSWER 64 /* Nc + MAC */
#define INART_AUTH_KEY_MIN 16
#define INART_AUTH_KEY_MAX 256

struct inart_ctl_key {
	uint8_t k[INART_AUTH_KEY_MAX];
	size_t len;
};

/* A key file: its bytes (a trailing newline dropped), 16..256 of them; the
 * file must not be readable or writable by group or others.  0 or -errno
 * (err says why). */
int inart_ctl_key_load(const char *path, struct inart_ctl_key *key, struct inart_err *err);

/* Server: the hello to send and its nonce.  0 or -EIO (no randomness). */
int inart_ctlauth_hello(uint8_t hello[INART_AUTH_HELLO], uint8_t ns[INART_AUTH_NONCE]);

/* Server: check the client's answer to nonce ns; 0 with the proof to send
 * and the session key, or -EACCES. */
int inart_ctlauth_check(const struct inart_ctl_key *key, const uint8_t ns[INART_AUTH_NONCE],
			const uint8_t answer[INART_AUTH_ANSWER], uint8_t proof[INART_AUTH_MAC],
			uint8_t ks[INART_AUTH_MAC]);

/* Client: the answer to a hello, the proof to expect and the session key.
 * 0, -EPROTO (not a hello), -EIO. */
int inart_ctlauth_answer(const struct inart_ctl_key *key, const uint8_t hello[INART_AUTH_HELLO],
			 uint8_t answer[INART_AUTH_ANSWER], uint8_t proof[INART_AUTH_MAC],
			 uint8_t ks[INART_AUTH_MAC]);

/* The MAC of frame (len bytes) number seq in direction dir (0: to the
 * server, 1: to the client): 0 or -ENOMEM; verify compares in constant time
 * (0, or -EACCES: different, or not computed). */
int inart_ctlauth_mac(const uint8_t ks[INART_AUTH_MAC], int dir, uint64_t seq, const uint8_t *frame,
		      size_t len, uint8_t mac[INART_AUTH_MAC]);
int inart_ctlauth_verify(const uint8_t ks[INART_AUTH_MAC], int dir, uint64_t seq,
			 const uint8_t *frame, size_t len, const uint8_t mac[INART_AUTH_MAC]);

#endif
