/*
 * err: the error message struct shared by libinart and libinart_worker.
 *
 * A `struct inart_err` (owned by the caller, may be NULL where a function
 * takes one) receives one line saying what is wrong and where (file,
 * line/column or id).
 */
#ifndef INART_INART_ERR_H
#define INART_INART_ERR_H

#ifdef __cplusplus
extern "C" {
#endif

#define INART_ERR_MAX 512

struct inart_err {
	char msg[INART_ERR_MAX];
};

#ifdef __cplusplus
}
#endif

#endif
