/*
 * install_id: the identity of an installation (install.h), a digest of
 * everything it installs, and its text form.  Pure functions of the
 * installation; nothing owned.
 */
#ifndef INART_INSTALL_ID_H
#define INART_INSTALL_ID_H

#include <stdint.h>

struct inart_install;

/* The identity of an installation: a 64-bit digest (FNV-1a) of everything
 * it installs -- every switch's configuration, labels, routes and ingress
 * entries, every PS's trees, every worker's configuration -- so of its
 * inputs and options as far as they change anything installed.  Every
 * node's batch carries it (`install_id`, 16 hex digits); `inart ctl install`
 * compares what the nodes hold with it. */
uint64_t inart_install_digest(const struct inart_install *in);
/* "%016llx" of an identity into out[17]. */
void inart_install_id_fmt(uint64_t id, char out[17]);

#endif
