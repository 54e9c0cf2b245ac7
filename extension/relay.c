/*-------------------------------------------------------------------------
 *
 * relay.c
 *	  The NOTIFY relay: with shared_preload_libraries = 'jobq', the
 *	  background sweeper of a database sends the "jobq.<queue>"
 *	  notifications for the producers of that database, after their
 *	  commits, instead of each producer sending its own.
 *
 * Why: a transaction that has called NOTIFY takes a lock that serializes
 * the commits of every notifying transaction in the cluster, and holds it
 * across its commit record's flush.  Producers enqueueing one job per
 * transaction then commit one at a time, and group commit no longer
 * helps (bench/RESULTS.md: a quarter of the throughput at 16 clients).
 * A producer served by a relay only notes the queue (wake.c); its commit
 * callback hands the name to the relay and sets the relay's latch, or does
 * nothing when the name is pending at the relay already.  The relay
 * sends the notifications of everything handed to it since its last
 * round in one short transaction of its own, with synchronous_commit off
 * (a notification is a hint, nothing to make durable): many commits of a
 * queue become one notification, and only the relay ever waits for the
 * notify lock.  Rounds are spaced (jobq_relay_next_round), so that a
 * stream of commits costs a round every few milliseconds, not one each.
 *
 * The notification is still sent only after the producer's commit is
 * visible, never for a rollback.  What a relay may lose is a hint, never a
 * job: if the relay exits between a producer's note and its commit, or its
 * pending set is lost with it, idle workers find the job on their next
 * poll (jobq-worker and jobq_wait_for_work callers poll as well as
 * listen).  A full pending set is not a loss: the relay then notifies every
 * queue that has notify on.  Without a relay for the database (not
 * preloaded, database not in jobq.sweeper_databases, sweeper not started
 * yet) producers send NOTIFY themselves, as before.
 *
 * The relay also sends the completion events of queues with
 * notify_finished (finished.c): a committing backend appends its finished
 * jobs (queue, id, state) to the relay's buffer of JOBQ_RELAY_FINISHED_MAX
 * of them, and the next round sends them as "jobq.finished.<queue>"
 * notifications, the lines of each queue packed under the payload limit.
 * When the buffer is full the jobs that do not fit are dropped, and the
 * queue's next notification carries a line "lost" (listeners then catch
 * up with jobq_finished_since); a round carries the events of at most
 * JOBQ_RELAY_FINISHED_QUEUES queues, and those of another are dropped.
 *
 * Copyright (c) 2026, the jobq developers
 *
 * IDENTIFICATION
 *	  extension/relay.c
 *
 *-------------------------------------------------------------------------
 */
#include "jobq.h"

#include "access/xact.h"
#include "commands/async.h"
#include "miscadmin.h"
#include "pgstat.h"
#include "storage/ipc.h"
#include "storage/latch.h"
#include "storage/shmem.h"
#include "storage/lwlock.h"
#include "utils/builtins.h"
#include "utils/guc.h"
#include "utils/snapmgr.h"

/* queue names a relay holds between two rounds before it notifies all */
#define JOBQ_RELAY_PENDING_MAX		64

/*
 * Finished jobs (notify_finished) a relay holds between two rounds, and
 * the queues they belong to; past either, events are dropped and said lost
 */
#define JOBQ_RELAY_FINISHED_MAX		4096
#define JOBQ_RELAY_FINISHED_QUEUES	64

/* One finished job handed to a relay */
typedef struct JobqRelayFinished
{
	int64		id;
	uint8		queue;			/* index into finished_queues */
	char		state;			/* JobqAwaitState */
} JobqRelayFinished;

/*
 * Least time between two relay rounds.  Under a stream of commits the relay
 * would otherwise run a transaction per commit; waiting out the rest of
 * the spacing after a round lets one round carry all the queues noted
 * meanwhile.  An idle relay answers at once.
 *
 * The spacing starts at the minimum and doubles, up to the maximum, each
 * time the next commit came within the minimum of the last round (a steady
 * stream of commits); a commit that came later resets it to the minimum,
 * after waiting out what is left of the current spacing once.  So jobs a
 * few milliseconds apart, as in the latency benchmark (5 ms), are relayed
 * 2 ms apart at most, even right after a burst.  A round is a short
 * transaction of its own (an XID, a commit record, a write to the
 * notification queue); at 17,000-18,000 enqueues/s from one producer the
 * growing spacing took the sweeper from 1.4-2.8 % to 1.0-1.4 % of a core.
 */
#define JOBQ_RELAY_SPACING_MIN_USECS	2000
#define JOBQ_RELAY_SPACING_MAX_USECS	8000

/* One relay: the sweeper of one database */
typedef struct JobqRelay
{
	LWLock	   *lock;			/* protects everything below */
	Oid			dboid;			/* InvalidOid: no relay in this slot */
	Latch	   *latch;			/* the relay's latch */
	bool		overflow;		/* pending[] was full: notify every queue */
	bool		schedules_changed;	/* a schedule was written: tick (tick.c) */
	int			npending;
	char		pending[JOBQ_RELAY_PENDING_MAX][JOBQ_QUEUE_NAME_MAX + 1];
	/* completion events (finished.c) */
	int			nfinished;
	int			nfinished_queues;
	bool		finished_lost[JOBQ_RELAY_FINISHED_QUEUES];
	char		finished_queues[JOBQ_RELAY_FINISHED_QUEUES][JOBQ_QUEUE_NAME_MAX + 1];
	JobqRelayFinished finished[JOBQ_RELAY_FINISHED_MAX];
} JobqRelay;

static JobqRelay *relays = NULL;	/* JOBQ_SWEEPER_DATABASES_MAX slots */
static int	my_relay = -1;		/* the slot this process serves, if a relay */

/* The relay's own round spacing (see JOBQ_RELAY_SPACING_MIN_USECS) */
static TimestampTz last_round = 0;	/* when the last round ended */
static TimestampTz next_round = DT_NOEND;	/* when the next is due; DT_NOEND:
											 * none is */
static int64 spacing = JOBQ_RELAY_SPACING_MIN_USECS;

static SPIPlanPtr notify_all_plan = NULL;

Size
jobq_relay_shmem_size(void)
{
	return mul_size(JOBQ_SWEEPER_DATABASES_MAX, sizeof(JobqRelay));
}

/*
 * jobq_relay_shmem_init
 *	  Called from the shmem_startup_hook, under AddinShmemInitLock.
 */
void
jobq_relay_shmem_init(void)
{
	bool		found;

	relays = ShmemInitStruct("jobq notify relays", jobq_relay_shmem_size(), &found);
	if (!found)
	{
		for (int i = 0; i < JOBQ_SWEEPER_DATABASES_MAX; i++)
		{
			relays[i].lock = &(GetNamedLWLockTranche("jobq"))[1 + i].lock;
			relays[i].dboid = InvalidOid;
			relays[i].latch = NULL;
			relays[i].overflow = false;
			relays[i].schedules_changed = false;
			relays[i].npending = 0;
			relays[i].nfinished = 0;
			relays[i].nfinished_queues = 0;
		}
	}
}

/*
 * jobq_relay_for_database
 *	  The slot of the relay serving this database, or -1.  An unlocked
 *	  read: a relay that appears or goes away meanwhile is handled at
 *	  commit (see jobq_relay_hand_over).
 */
int
jobq_relay_for_database(void)
{
	if (relays == NULL)
		return -1;
	for (int i = 0; i < JOBQ_SWEEPER_DATABASES_MAX; i++)
		if (relays[i].dboid == MyDatabaseId)
			return i;
	return -1;
}

/*
 * relay_pending_has
 *	  Whether queue is in the relay's pending set; the caller holds the
 *	  relay's lock.
 */
static bool
relay_pending_has(JobqRelay *r, const char *queue)
{
	for (int p = 0; p < r->npending; p++)
		if (strcmp(r->pending[p], queue) == 0)
			return true;
	return false;
}

/*
 * relay_has_all
 *	  Whether every queue of notes to be relayed is in the relay's pending
 *	  set already (or the set overflowed).  Then the relay will be woken
 *	  for them (whoever added a name sets its latch after releasing the
 *	  lock), and its next round, which takes the set under the exclusive
 *	  lock, notifies them after this commit: the producer need not take
 *	  that lock, which at many producers per queue is most commits.
 */
static bool
relay_has_all(JobqRelay *r, const JobqReadyNote *notes, int n)
{
	if (r->dboid != MyDatabaseId)
		return false;
	for (int i = 0; i < n && !r->overflow; i++)
		if (notes[i].relay && !relay_pending_has(r, notes[i].queue))
			return false;
	return true;
}

/*
 * jobq_relay_hand_over
 *	  At commit (wake.c): add the queues of notes to be relayed to the
 *	  pending set of relay slot and set its latch, unless they are all
 *	  pending already.  The relay may have exited since the notes were
 *	  taken: then the hints are dropped (see the file header).
 */
void
jobq_relay_hand_over(int slot, const JobqReadyNote *notes, int n)
{
	JobqRelay  *r = &relays[slot];
	Latch	   *latch = NULL;
	bool		pending;

	LWLockAcquire(r->lock, LW_SHARED);
	pending = relay_has_all(r, notes, n);
	LWLockRelease(r->lock);
	if (pending)
		return;

	LWLockAcquire(r->lock, LW_EXCLUSIVE);
	if (r->dboid == MyDatabaseId)
	{
		for (int i = 0; i < n; i++)
		{
			if (r->overflow)
				break;			/* every queue is notified anyway */
			if (!notes[i].relay || relay_pending_has(r, notes[i].queue))
				continue;
			if (r->npending < JOBQ_RELAY_PENDING_MAX)
				strlcpy(r->pending[r->npending++], notes[i].queue, JOBQ_QUEUE_NAME_MAX + 1);
			else
				r->overflow = true;
		}
		latch = r->latch;
	}
	LWLockRelease(r->lock);
	if (latch != NULL)
		SetLatch(latch);
}

/*
 * finished_queue_index
 *	  The index of queue among the relay's finished_queues, added if new;
 *	  -1 when there is no room.  The caller holds the relay's lock.
 */
static int
finished_queue_index(JobqRelay *r, const char *queue)
{
	for (int q = 0; q < r->nfinished_queues; q++)
		if (strcmp(r->finished_queues[q], queue) == 0)
			return q;
	if (r->nfinished_queues == JOBQ_RELAY_FINISHED_QUEUES)
		return -1;
	strlcpy(r->finished_queues[r->nfinished_queues], queue, JOBQ_QUEUE_NAME_MAX + 1);
	r->finished_lost[r->nfinished_queues] = false;
	return r->nfinished_queues++;
}

/*
 * jobq_relay_hand_finished
 *	  At commit (finished.c): append this transaction's finished jobs to
 *	  the buffer of relay slot and set its latch.  What does not fit is
 *	  dropped and said lost; a relay gone since drops them all (hints).
 */
void
jobq_relay_hand_finished(int slot, const JobqFinishedNote *notes, int n)
{
	JobqRelay  *r = &relays[slot];
	Latch	   *latch = NULL;
	int			q = -1;

	LWLockAcquire(r->lock, LW_EXCLUSIVE);
	if (r->dboid == MyDatabaseId)
	{
		for (int i = 0; i < n; i++)
		{
			if (i == 0 || strcmp(notes[i].queue, notes[i - 1].queue) != 0)
				q = finished_queue_index(r, notes[i].queue);
			if (q < 0)
				continue;		/* no room for another queue: dropped */
			if (r->nfinished == JOBQ_RELAY_FINISHED_MAX)
				r->finished_lost[q] = true;
			else
			{
				r->finished[r->nfinished].id = notes[i].id;
				r->finished[r->nfinished].queue = (uint8) q;
				r->finished[r->nfinished].state = notes[i].state;
				r->nfinished++;
			}
		}
		latch = r->latch;
	}
	LWLockRelease(r->lock);
	if (latch != NULL)
		SetLatch(latch);
}

/*
 * jobq_send_notify
 *	  NOTIFY "jobq.<queue>" with an empty payload, in the current
 *	  transaction: a hint for idle workers, never data (any role may LISTEN
 *	  on any channel).  PostgreSQL folds identical notifications of one
 *	  transaction into one, and drops those of a rolled-back
 *	  subtransaction.
 */
void
jobq_send_notify(const char *queue, int len)
{
	char		channel[NAMEDATALEN];

	if (len > JOBQ_QUEUE_NAME_MAX)
		elog(ERROR, "jobq: queue name too long for a channel");
	memcpy(channel, "jobq.", 5);
	memcpy(channel + 5, queue, len);
	channel[5 + len] = '\0';
	Async_Notify(channel, "");
}

/*
 * relay_detach
 *	  The relay exits: producers notify by themselves from now on.
 *
 * NB: only while the slot is still ours.  A sweeper told to stop may
 * outlive the launcher's restart delay, and its successor for the same
 * database has attached to the slot by then; clearing it would send every
 * producer back to its own NOTIFY.
 */
static void
relay_detach(int code, Datum arg)
{
	JobqRelay  *r = &relays[my_relay];

	LWLockAcquire(r->lock, LW_EXCLUSIVE);
	if (r->latch == MyLatch)
	{
		r->dboid = InvalidOid;
		r->latch = NULL;
		r->npending = 0;
		r->overflow = false;
		r->nfinished = 0;
		r->nfinished_queues = 0;
	}
	LWLockRelease(r->lock);
	my_relay = -1;
}

/*
 * jobq_relay_attach
 *	  Called by the sweeper of slot, once connected to its database: serve
 *	  that database's producers from now on.
 */
void
jobq_relay_attach(int slot)
{
	JobqRelay  *r;

	if (relays == NULL || slot < 0 || slot >= JOBQ_SWEEPER_DATABASES_MAX)
		return;
	r = &relays[slot];
	LWLockAcquire(r->lock, LW_EXCLUSIVE);
	r->latch = MyLatch;
	r->npending = 0;
	r->overflow = false;
	r->nfinished = 0;
	r->nfinished_queues = 0;
	r->dboid = MyDatabaseId;
	LWLockRelease(r->lock);
	my_relay = slot;
	on_shmem_exit(relay_detach, (Datum) 0);
}

/*
 * jobq_relay_schedules_changed
 *	  Called at the commit of a transaction that wrote a schedule: tell the
 *	  sweeper of this database (which also ticks its schedules) to read
 *	  when the next tick is due, now rather than after its next sweep.
 */
void
jobq_relay_schedules_changed(void)
{
	int			slot = jobq_relay_for_database();
	JobqRelay  *r;
	Latch	   *latch = NULL;

	if (slot < 0)
		return;
	r = &relays[slot];
	LWLockAcquire(r->lock, LW_EXCLUSIVE);
	if (r->dboid == MyDatabaseId && r->latch != NULL)
	{
		r->schedules_changed = true;
		latch = r->latch;
	}
	LWLockRelease(r->lock);
	if (latch)
		SetLatch(latch);
}

/*
 * jobq_relay_take_schedules_changed
 *	  The sweeper: whether a schedule was written since the last call.
 */
bool
jobq_relay_take_schedules_changed(void)
{
	bool		changed;

	if (my_relay < 0)
		return false;
	LWLockAcquire(relays[my_relay].lock, LW_EXCLUSIVE);
	changed = relays[my_relay].schedules_changed;
	relays[my_relay].schedules_changed = false;
	LWLockRelease(relays[my_relay].lock);
	return changed;
}

/*
 * jobq_relay_pending
 *	  Whether this relay has notifications to send.
 */
bool
jobq_relay_pending(void)
{
	bool		pending;

	if (my_relay < 0)
		return false;
	LWLockAcquire(relays[my_relay].lock, LW_SHARED);
	pending = relays[my_relay].npending > 0 || relays[my_relay].overflow ||
		relays[my_relay].nfinished_queues > 0;
	LWLockRelease(relays[my_relay].lock);
	return pending;
}

/*
 * notify_every_queue
 *	  After an overflow: notify every queue with notify on that is not
 *	  paused.  Inside the relay's transaction.  Producers of this database
 *	  noted queues, so the extension is installed here (if it was dropped
 *	  meanwhile, the error is the sweeper's to log).
 */
static void
notify_every_queue(void)
{
	int			rc;

	jobq_spi_connect();
	PushActiveSnapshot(GetTransactionSnapshot());
	if (notify_all_plan == NULL)
		notify_all_plan = jobq_prepare("SELECT name FROM jobq.queues"
									   " WHERE notify AND NOT paused",
									   0, NULL);
	rc = SPI_execute_plan(notify_all_plan, NULL, NULL, true, 0);
	jobq_spi_check(rc, SPI_OK_SELECT, "list queues to notify");
	for (uint64 i = 0; i < SPI_processed; i++)
	{
		char	   *name = SPI_getvalue(SPI_tuptable->vals[i], SPI_tuptable->tupdesc, 1);

		jobq_send_notify(name, strlen(name));
	}
	PopActiveSnapshot();
	jobq_spi_finish();
}

/*
 * jobq_relay_next_round
 *	  In the relay: how many milliseconds until its next round is due, 0
 *	  when it is due now, -1 when nothing is pending.  The first call that
 *	  finds names pending schedules the round, spaced from the last one
 *	  (see JOBQ_RELAY_SPACING_MIN_USECS), and adapts the spacing to how
 *	  soon after that round the names came; later calls keep to that time
 *	  until jobq_relay_round runs.  Rounded to the nearest millisecond, the
 *	  resolution of a latch wait.
 */
long
jobq_relay_next_round(void)
{
	TimestampTz now = GetCurrentTimestamp();

	if (next_round == DT_NOEND)
	{
		int64		since = now - last_round;

		if (!jobq_relay_pending())
			return -1;
		next_round = (since >= 0 && since < spacing) ? last_round + spacing : now;
		if (since >= 0 && since < JOBQ_RELAY_SPACING_MIN_USECS)
			spacing = Min(spacing * 2, JOBQ_RELAY_SPACING_MAX_USECS);
		else
			spacing = JOBQ_RELAY_SPACING_MIN_USECS;
	}
	/* NB: a clock set back must not put the round off */
	if (next_round - now > JOBQ_RELAY_SPACING_MAX_USECS)
		next_round = now;
	return next_round - now < 500 ? 0 : (long) ((next_round - now + 500) / 1000);
}

/*
 * jobq_relay_round
 *	  Send the notifications pending for this relay, in one transaction.
 *	  The caller (the sweeper) catches errors; the names taken are then
 *	  lost, which costs idle workers a poll interval, nothing more.
 */
void
jobq_relay_round(void)
{
	JobqRelay  *r;
	char		names[JOBQ_RELAY_PENDING_MAX][JOBQ_QUEUE_NAME_MAX + 1];
	int			n;
	bool		overflow;
	JobqRelayFinished *finished = NULL;
	int			nfinished;
	int			nfqueues;
	bool		lost[JOBQ_RELAY_FINISHED_QUEUES];
	char		fqueues[JOBQ_RELAY_FINISHED_QUEUES][JOBQ_QUEUE_NAME_MAX + 1];

	if (my_relay < 0)
		return;
	r = &relays[my_relay];
	next_round = DT_NOEND;		/* what is pending from now on is the next's */
	LWLockAcquire(r->lock, LW_EXCLUSIVE);
	n = r->npending;
	overflow = r->overflow;
	memcpy(names, r->pending, sizeof(names[0]) * n);
	r->npending = 0;
	r->overflow = false;
	nfinished = r->nfinished;
	nfqueues = r->nfinished_queues;
	if (nfinished > 0)
	{
		/* NB: no palloc under the lock (only the relay runs this) */
		static JobqRelayFinished copy[JOBQ_RELAY_FINISHED_MAX];

		memcpy(copy, r->finished, sizeof(JobqRelayFinished) * nfinished);
		finished = copy;
	}
	memcpy(lost, r->finished_lost, sizeof(bool) * nfqueues);
	memcpy(fqueues, r->finished_queues, sizeof(fqueues[0]) * nfqueues);
	r->nfinished = 0;
	r->nfinished_queues = 0;
	LWLockRelease(r->lock);
	if (n == 0 && !overflow && nfqueues == 0)
		return;

	SetCurrentStatementStartTimestamp();
	StartTransactionCommand();
	pgstat_report_activity(STATE_RUNNING, "jobq notify relay");
	/* a hint needs no flush: do not wait for one (reverted at commit) */
	(void) set_config_option("synchronous_commit", "off", PGC_SUSET, PGC_S_SESSION,
							 GUC_ACTION_LOCAL, true, 0, false);
	if (overflow)
		notify_every_queue();
	else
		for (int i = 0; i < n; i++)
			jobq_send_notify(names[i], strlen(names[i]));
	for (int q = 0; q < nfqueues; q++)
	{
		JobqFinishedSender sender;

		jobq_finished_sender_begin(&sender, fqueues[q]);
		for (int i = 0; i < nfinished; i++)
			if (finished[i].queue == q)
				jobq_finished_sender_job(&sender, finished[i].id,
										 (JobqAwaitState) finished[i].state);
		if (lost[q])
			jobq_finished_sender_line(&sender, "lost");
		jobq_finished_sender_end(&sender);
	}
	CommitTransactionCommand();
	last_round = GetCurrentTimestamp();
	pgstat_report_activity(STATE_IDLE, NULL);
}
