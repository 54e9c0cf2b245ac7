/*
 * common.h: helpers shared by the stress programs (producer, worker,
 * checker, t3, listen, fuzz).  Not part of libjobq.
 */
#ifndef STRESS_COMMON_H
#define STRESS_COMMON_H

#define _GNU_SOURCE
#include <stdint.h>
#include <stdio.h>
#include <stddef.h>

#include "jobq-client.h"

/* microseconds since the epoch from a timestamptz text
 * "YYYY-MM-DD HH:MM:SS[.ffffff]+HH[:MM[:SS]]"; 0 when unparsable */
int64_t		ts_to_us(const char *s);

/* the server clock (clock_timestamp) in microseconds; 0 on error */
int64_t		server_now_us(JobqConn *conn);

/* a string field of a JSON object text (flat, no escapes in the value);
 * copies into buf; 0 when found */
int			json_str_field(const char *json, const char *key, char *buf, size_t bufsz);
/* an integer field; def when missing */
long long	json_int_field(const char *json, const char *key, long long def);

/* a line-buffered history file opened for append; exits on failure */
FILE	   *hist_open(const char *path);

/* monotonic milliseconds */
int64_t		mono_ms(void);
void		sleep_ms(int ms);

/* xorshift random */
uint64_t	rnd(void);
void		rnd_seed(uint64_t s);
double		rnd01(void);

/* connect (retrying until deadline_ms of monotonic time); NULL on failure */
JobqConn   *connect_retry(const char *conninfo, unsigned flags, int timeout_ms);
/* reconnect until it works or timeout_ms passes; JOBQ_OK / JOBQ_ERR */
int			reconnect_retry(JobqConn *conn, int timeout_ms);

/* is the last error a lost connection (retry after reconnect)? */
int			conn_lost(JobqConn *conn);

extern volatile int stop_flag;
void		install_stop_handler(void);

#endif
