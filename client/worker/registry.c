/*-------------------------------------------------------------------------
 *
 * registry.c
 *	  jobq-worker in the server's worker registry: register after every
 *	  connect, heartbeat, act on the state asked of us, deregister at exit.
 *
 * The registry is advisory (doc/sql.md, "Workers"): nothing here is
 * needed to claim, and a server whose jobq SQL is 0.1.0 has none, which
 * is logged once; the worker then runs exactly as before.  Once
 * registered, claims carry the registry id as their worker label, so the
 * server lists our running jobs and can end our waiting claim when an
 * operator signals us.
 *
 * Heartbeats go every heartbeat_every (a quarter of the registration's
 * timeout) on the worker's one connection, between claims, and at once
 * after a waiting claim came back empty before its wait was over (a
 * signal may have ended it).  The answer:
 *	running		claim (again, after quiet);
 *	quiet		stop claiming; running and claimed jobs finish, their
 *				leases are still extended, heartbeats go on;
 *	stopping	the SIGTERM path: finish within --grace, release the rest;
 *	unregistered	the registry lost us (pruned while we were cut off, or
 *				the server restarted: the table is unlogged): register
 *				again under the same id, then report our own state.
 * Our own state goes with the heartbeats (stopping after SIGTERM; quiet in
 * the first one after a registration), so a registry emptied by a crash
 * learns it again.
 *
 * Copyright (c) 2026, the jobq developers
 *
 * IDENTIFICATION
 *	  client/worker/registry.c
 *
 *-------------------------------------------------------------------------
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "worker.h"

/* before the first answer, and after a failed call: try again after */
#define REGISTRY_RETRY 5.0		/* seconds */

/* what we say about ourselves: the handler (or the callback) and --batch */
static char *
metadata_json(Worker *w)
{
	JobqBuf		b;

	jobq_buf_init(&b);
	jobq_buf_puts(&b, "{\"handler\": ");
	jobq_buf_json_string(&b, w->callback ? "(callback)" : w->handler_argv[0]);
	jobq_buf_printf(&b, ", \"batch\": %d, \"lease\": %g}", w->batch, w->lease);
	jobq_xcheck(&b);
	return b.data;
}

/*
 * own_state
 *		Our own state, for the heartbeat: stopping once we stop (SIGTERM);
 *		quiet only in the first heartbeat after a registration, to bring a
 *		registry that lost us up to date.  NB: not in later ones, since
 *		states only move forward: a quiet reported with every heartbeat
 *		would undo the operator's resume.
 */
static JobqWorkerState
own_state(Worker *w)
{
	if (w->stopping)
		return JOBQ_WORKER_STOPPING;
	return w->quiet && w->reg.fresh ? JOBQ_WORKER_QUIET : JOBQ_WORKER_RUNNING;
}

/*
 * registry_register
 *		Register (again, under our id, once we have one).  Called after each
 *		connect and when a heartbeat answers unregistered.
 */
void
registry_register(Worker *w, double now)
{
	JobqWorkerOpts opts = JOBQ_WORKER_OPTS_INIT;
	char		host[64];
	char		id[JOBQ_WORKER_ID_LEN + 1];
	char	   *metadata;
	int			every_ms = 0;
	int			rc;

	if (w->reg.off || !w->db.connected || w->db.claiming)
		return;
	w->reg.registered = false;
	gethostname(host, sizeof(host));
	host[sizeof(host) - 1] = '\0';
	metadata = metadata_json(w);
	opts.host = host;
	opts.pid = (int) getpid();
	opts.queues = (const char *const *) w->queues;
	opts.nqueues = w->nqueues;
	opts.slots = w->concurrency;
	opts.version = JOBQ_VERSION_STRING;
	opts.metadata = metadata;
	opts.worker_id = w->reg.id[0] ? w->reg.id : NULL;
	opts.timeout_s = (int) (w->worker_timeout + 0.999);	/* whole seconds, up */
	rc = jobq_worker_register(w->db.conn, w->registry_name ? w->registry_name : w->worker_name,
							  &opts, id, &every_ms);
	free(metadata);
	if (rc != JOBQ_OK)
	{
		if (jobq_status(w->db.conn) == JOBQ_ERR_VERSION)
		{
			wlog(w, "info", "the server has no worker registry (%s); running unregistered",
				 db_errtext(w));
			w->reg.off = true;
		}
		else if (db_failed(w) == DB_ERROR)
		{
			wlog(w, "warning", "could not register in the worker registry: %s; "
				 "trying again in %g s", db_errtext(w), REGISTRY_RETRY);
			w->reg.next_beat = now + REGISTRY_RETRY;
		}
		return;
	}
	if (w->reg.id[0] == '\0')
		wlog(w, "info", "registered as worker %s", id);
	else
		wlog(w, "info", "registered again as worker %s", id);
	memcpy(w->reg.id, id, sizeof(id));
	w->reg.registered = true;
	w->reg.fresh = true;
	w->reg.every = every_ms > 0 ? every_ms / 1000.0 : REGISTRY_RETRY;
	/* a new row says running: tell it at once if we are not */
	w->reg.next_beat = own_state(w) == JOBQ_WORKER_RUNNING ? now + w->reg.every : now;
	w->claim_label = w->reg.id;
}

/* act on the state the registry asks of us */
static void
obey(Worker *w, JobqWorkerState asked, double now)
{
	switch (asked)
	{
		case JOBQ_WORKER_RUNNING:
			if (w->quiet && !w->stopping)
			{
				wlog(w, "info", "resumed by the worker registry: claiming again");
				w->quiet = false;
				w->want_claim = true;
			}
			break;
		case JOBQ_WORKER_QUIET:
			if (!w->quiet && !w->stopping)
			{
				wlog(w, "info", "quieted by the worker registry: no more claims, "
					 "running=%d claimed=%d finish", flow_running(w), w->nbacklog);
				w->quiet = true;
			}
			break;
		case JOBQ_WORKER_STOPPING:
			if (!w->stopping)
			{
				wlog(w, "info", "stopped by the worker registry: stopping after running jobs");
				w->stopping = true;
				w->stop_deadline = now + w->grace;
			}
			break;
		case JOBQ_WORKER_UNREGISTERED:
			break;
	}
}

/*
 * registry_beat
 *		Heartbeat when one is due (and the session is free), and act on the
 *		answer; register when we are not (yet) registered.
 */
void
registry_beat(Worker *w, double now)
{
	int			asked;

	if (w->reg.off || !w->db.connected || w->db.claiming || now < w->reg.next_beat)
		return;
	if (!w->reg.registered)
	{
		registry_register(w, now);
		return;
	}
	asked = jobq_worker_heartbeat(w->db.conn, w->reg.id, flow_running(w) + w->nbacklog,
								  own_state(w), NULL);
	if (asked < 0)
	{
		if (db_failed(w) == DB_ERROR)
			wlog(w, "warning", "worker heartbeat failed: %s", db_errtext(w));
		w->reg.next_beat = now + REGISTRY_RETRY;
		return;
	}
	w->reg.next_beat = now + w->reg.every;
	w->reg.fresh = false;
	if (asked == JOBQ_WORKER_UNREGISTERED)
	{
		wlog(w, "info", "the worker registry no longer has worker %s (pruned, or the "
			 "server restarted): registering again", w->reg.id);
		registry_register(w, now);
		return;
	}
	obey(w, (JobqWorkerState) asked, now);
}

/*
 * registry_beat_soon
 *		Heartbeat at the next chance: a waiting claim ended early (a signal
 *		may have ended it), or a SIGTERM to report.
 */
void
registry_beat_soon(Worker *w, double now)
{
	if (w->reg.registered && w->reg.next_beat > now)
		w->reg.next_beat = now;
}

/* when the next heartbeat is due (monotonic), 0 when none is */
double
registry_next_beat(Worker *w)
{
	return w->reg.off || !w->db.connected ? 0 : w->reg.next_beat;
}

/*
 * registry_deregister
 *		At exit: leave the registry, so that operators do not see us until
 *		the sweeper prunes us.
 */
void
registry_deregister(Worker *w)
{
	if (!w->reg.registered || !w->db.connected || w->db.claiming)
		return;
	if (jobq_worker_deregister(w->db.conn, w->reg.id) < 0)
		wlog(w, "warning", "could not leave the worker registry: %s", db_errtext(w));
	w->reg.registered = false;
}
