/* file: see file.h. */
#include "common/file.h"

#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

const char *inart_file_name(const char *path)
{
	return strcmp(path, "-") == 0 ? "<stdin>" : path;
}

char *inart_file_read(const char *path, size_t *len, struct inart_err *err)
{
	int is_stdin = strcmp(path, "-") == 0;
	FILE *f = is_stdin ? stdin : fopen(path, "rb");
	char *buf = NULL;
	size_t n = 0, cap = 0;
	int rc = 0;

	if (f == NULL) {
		rc = -errno;
		inart_err_set(err, rc, "%s: %s", path, strerror(errno));
		goto out;
	}
	for (;;) {
		size_t got;

		if (n == cap) {
			size_t nc = cap ? 2 * cap : 65536;
			char *nb;

			if (cap > INART_FILE_MAX) {
				rc = inart_err_set(err, -EFBIG, "%s: file is larger than %zu MiB",
						   inart_file_name(path), INART_FILE_MAX >> 20);
				goto out;
			}
			if (nc > INART_FILE_MAX + 1)
				nc = INART_FILE_MAX + 1;
			nb = realloc(buf, nc + 1);
			if (nb == NULL) {
				rc = inart_err_set(err, -ENOMEM, "%s: out of memory",
						   inart_file_name(path));
				goto out;
			}
			buf = nb;
			cap = nc;
		}
		got = fread(buf + n, 1, cap - n, f);
		n += got;
		if (got == 0) {
			if (ferror(f)) {
				rc = -(errno ? errno : EIO);
				inart_err_set(err, rc, "%s: read error: %s", inart_file_name(path),
					      strerror(-rc));
				goto out;
			}
			break;
		}
	}
	if (n > INART_FILE_MAX) {
		rc = inart_err_set(err, -EFBIG, "%s: file is larger than %zu MiB",
				   inart_file_name(path), INART_FILE_MAX >> 20);
		goto out;
	}
	if (buf == NULL && (buf = malloc(1)) == NULL) {
		rc = inart_err_set(err, -ENOMEM, "%s: out of memory", inart_file_name(path));
		goto out;
	}
	buf[n] = '\0';
	if (len)
		*len = n;
out:
	if (f != NULL && !is_stdin)
		fclose(f);
	if (rc == 0)
		return buf;
	free(buf);
	return inart_null_errno(-rc);
}

static int write_all(int fd, const char *p, size_t n)
{
	while (n > 0) {
		ssize_t w = write(fd, p, n);

		if (w < 0) {
			if (errno == EINTR)
				continue;
			return -errno;
		}
		p += w;
		n -= (size_t)w;
	}
	return 0;
}

int inart_file_write(const char *path, const char *text, struct inart_err *err)
{
	size_t n = strlen(text);
	char *tmp = NULL;
	int fd = -1, rc = 0;

	if (strcmp(path, "-") == 0) {
		if (fwrite(text, 1, n, stdout) != n || fflush(stdout) != 0)
			return inart_err_set(err, -(errno ? errno : EIO),
					     "<stdout>: write error: %s",
					     strerror(errno ? errno : EIO));
		return 0;
	}
	tmp = malloc(strlen(path) + 48);
	if (tmp == NULL)
		return inart_err_set(err, -ENOMEM, "%s: out of memory", path);
	/* A fresh name next to the target (same file system, so rename is
	 * atomic); O_EXCL so that two writers never share one. */
	for (int attempt = 0; attempt < 100 && fd < 0; attempt++) {
		sprintf(tmp, "%s.tmp.%ld.%d", path, (long)getpid(), attempt);
		fd = open(tmp, O_WRONLY | O_CREAT | O_EXCL | O_CLOEXEC, 0666);
		if (fd < 0 && errno != EEXIST)
			break;
	}
	if (fd < 0) {
		rc = inart_err_set(err, -errno, "%s: cannot create a temporary file: %s", path,
				   strerror(errno));
		goto out;
	}
	rc = write_all(fd, text, n);
	if (rc == 0 && fsync(fd) != 0)
		rc = -errno;
	if (close(fd) != 0 && rc == 0)
		rc = -errno;
	if (rc == 0 && rename(tmp, path) != 0)
		rc = -errno;
	if (rc < 0) {
		inart_err_set(err, rc, "%s: write error: %s", path, strerror(-rc));
		unlink(tmp);
	}
out:
	free(tmp);
	return rc;
}

void inart_fd_close(int fd)
{
	if (fd >= 0)
		close(fd);
}
