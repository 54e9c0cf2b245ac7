/*-------------------------------------------------------------------------
 *
 * wake.c
 *	  "A job became ready": the one place that decides who hears of it,
 *	  and when.
 *
 * Every statement that makes jobs ready (enqueue, a failure retried, a
 * release, a re-driven dead job, a resumed queue, a lease expired by a
 * sweep) calls jobq_announce_ready.  Two kinds of listener may be told:
 *
 *	idle workers that LISTEN on "jobq.<queue>": a NOTIFY, only for jobs
 *		ready now, only for a queue with notify on.  Sent by the database's
 *		relay (relay.c) when it has one, else by this transaction itself;
 *	waiting claims (wait.c): a note of the queue, how many jobs and when
 *		the earliest is due, for delayed jobs too, so that they sleep until
 *		then instead of polling.
 *
 * The same notes carry a worker signal (jobq_announce_signal): the
 * waiting claim of a worker asked to quiet, stop or resume returns at the
 * signal's commit, not before, and not at all if it rolls back.
 *
 * A paused queue tells nobody: nobody could claim its jobs (its resume
 * announces them).
 *
 * What is noted waits for the transaction's end, in one array of notes per
 * transaction with one set of callbacks, as PostgreSQL's own NOTIFY does
 * (commands/async.c): at commit, which is visible to other backends by
 * then, the notes are handed to the relay and the waiters are woken; at
 * abort or prepare they are forgotten (a prepared transaction's jobs are
 * found by polling and by the waiters' recheck).  A subtransaction that
 * rolls back (ROLLBACK TO SAVEPOINT, an exception block) takes its notes
 * with it, as it takes its jobs and its own NOTIFYs; one that commits
 * leaves them to its parent.
 *
 * All of this needs shared memory: without shared_preload_libraries =
 * 'jobq' there is neither relay nor waiter slot, no callback is installed,
 * nothing is noted, and a queue that notifies gets this transaction's own
 * NOTIFY.
 *
 * Copyright (c) 2026, the jobq developers
 *
 * IDENTIFICATION
 *	  extension/wake.c
 *
 *-------------------------------------------------------------------------
 */
#include "jobq.h"

#include "access/xact.h"
#include "common/int.h"

/* Notes of the current transaction, in TopTransactionContext */
static JobqReadyNote *notes = NULL;
static int	nnotes = 0;
static int	notes_cap = 0;
static int	notes_relay = -1;	/* the relay the notes go to, if any */

static bool callbacks_registered = false;

/*
 * same_queue
 *	  Whether note is about the queue name of len bytes (hash is its hash).
 */
static inline bool
same_queue(const JobqReadyNote *note, bool signal, uint32 hash, const char *name, int len)
{
	return note->signal == signal && note->hash == hash &&
		memcmp(note->queue, name, len) == 0 && note->queue[len] == '\0';
}

/*
 * merge_note
 *	  Fold what from says into into (the same queue): counts add up,
 *	  saturating (a resume announces "all", PG_INT64_MAX), the earlier due
 *	  wins, and either one's relay request stands.
 */
static void
merge_note(JobqReadyNote *into, const JobqReadyNote *from)
{
	if (pg_add_s64_overflow(into->count, from->count, &into->count))
		into->count = PG_INT64_MAX;
	into->due = Min(into->due, from->due);
	into->relay |= from->relay;
}

/*
 * take_note
 *	  Note that this (sub)transaction made count jobs of queue ready, the
 *	  earliest at due; relay: whether the relay is to notify the queue.
 *	  One note per queue and subtransaction level.  Not inlined: it would
 *	  give jobq_announce_ready's early returns its stack frame.  signal:
 *	  queue is a worker label instead (jobq_announce_signal).
 */
static pg_noinline void
take_note(text *queue, int64 count, TimestampTz due, bool relay, bool signal)
{
	const char *name = VARDATA_ANY(queue);
	int			len = VARSIZE_ANY_EXHDR(queue);
	JobqReadyNote note;

	if (len > JOBQ_QUEUE_NAME_MAX)
		elog(ERROR, "jobq: queue name too long to note");
	note.hash = jobq_wait_queue_hash(name, len);
	note.level = GetCurrentTransactionNestLevel();
	note.relay = relay;
	note.count = count;
	note.due = due;
	note.signal = signal;
	for (int i = 0; i < nnotes; i++)
		if (notes[i].level == note.level && same_queue(&notes[i], signal, note.hash, name, len))
		{
			merge_note(&notes[i], &note);
			return;
		}
	if (nnotes == notes_cap)
		notes = jobq_xact_array_grow(notes, &notes_cap, sizeof(JobqReadyNote));
	memcpy(note.queue, name, len);
	note.queue[len] = '\0';
	notes[nnotes++] = note;
}

/*
 * jobq_announce_ready
 *	  Have the listeners of queue told, once this transaction commits (and
 *	  not if it or the current subtransaction rolls back), that count of its
 *	  jobs became ready, the earliest at due.  now is the caller's clock
 *	  (jobq_now) when it computed due: a job due by then is ready now.
 *	  notify and paused are the queue's settings.  Cheap when nobody
 *	  listens: without preload, or for a queue with notify off, it does no
 *	  more than note the queue for waiters.
 */
void
jobq_announce_ready(text *queue, int64 count, TimestampTz due, TimestampTz now,
					bool notify, bool paused)
{
	int			relay = -1;

	if (paused || count <= 0)
		return;
	if (notify && due <= now)
	{
		relay = notes_relay >= 0 ? notes_relay : jobq_relay_for_database();
		if (relay < 0)			/* no relay: our own NOTIFY */
			jobq_send_notify(VARDATA_ANY(queue), VARSIZE_ANY_EXHDR(queue));
	}
	if (!callbacks_registered)
		return;					/* not preloaded: no relay, no waiters */
	take_note(queue, count, due, relay >= 0, false);
	if (relay >= 0)
		notes_relay = relay;
}

/*
 * jobq_announce_signal
 *	  Have the waiting claim of worker (a claim label, at most
 *	  JOBQ_QUEUE_NAME_MAX bytes: a worker_id) return at once when this
 *	  transaction commits, so that the worker reads what it is asked
 *	  (jobq_worker_signal).  Without preload it is told at its next
 *	  heartbeat instead.
 */
void
jobq_announce_signal(text *worker)
{
	if (callbacks_registered)
		take_note(worker, 1, 0, false, true);
}

/*
 * wake_xact_callback
 *	  At commit, hand the notes to the relay and wake the waiters; at
 *	  commit, abort or prepare, forget them.
 */
static void
wake_xact_callback(XactEvent event, void *arg)
{
	switch (event)
	{
		case XACT_EVENT_COMMIT:
		case XACT_EVENT_PARALLEL_COMMIT:
			if (nnotes > 0)
			{
				if (notes_relay >= 0)
					jobq_relay_hand_over(notes_relay, notes, nnotes);
				jobq_wait_wake(notes, nnotes);
			}
			/* FALLTHROUGH */
		case XACT_EVENT_ABORT:
		case XACT_EVENT_PARALLEL_ABORT:
		case XACT_EVENT_PREPARE:
			/* the array lived in TopTransactionContext, gone with it */
			notes = NULL;
			nnotes = 0;
			notes_cap = 0;
			notes_relay = -1;
			break;
		default:
			break;
	}
}

/*
 * wake_subxact_callback
 *	  A rolled-back subtransaction drops the notes it took; a committed
 *	  one hands them to its parent, folded into the parent's note of the
 *	  same queue (so that a loop of exception blocks keeps one note per
 *	  queue, not one per iteration).
 */
static void
wake_subxact_callback(SubXactEvent event, SubTransactionId mySubid,
					  SubTransactionId parentSubid, void *arg)
{
	int			level;
	int			kept = 0;

	if (nnotes == 0 ||
		(event != SUBXACT_EVENT_ABORT_SUB && event != SUBXACT_EVENT_COMMIT_SUB))
		return;
	level = GetCurrentTransactionNestLevel();
	for (int i = 0; i < nnotes; i++)
	{
		JobqReadyNote *note = &notes[i];
		bool		merged = false;

		if (note->level >= level)
		{
			if (event == SUBXACT_EVENT_ABORT_SUB)
				continue;
			for (int k = 0; k < kept && !merged; k++)
				if (notes[k].level == level - 1 &&
					same_queue(&notes[k], note->signal, note->hash, note->queue,
							   strlen(note->queue)))
				{
					merge_note(&notes[k], note);
					merged = true;
				}
			if (merged)
				continue;
			note->level = level - 1;
		}
		notes[kept++] = *note;
	}
	nnotes = kept;
}

/*
 * jobq_wake_register_callbacks
 *	  Install the callbacks once per backend (from _PG_init, when
 *	  preloading: the relay and the waiter slots live in shared memory).
 */
void
jobq_wake_register_callbacks(void)
{
	if (callbacks_registered)
		return;
	RegisterXactCallback(wake_xact_callback, NULL);
	RegisterSubXactCallback(wake_subxact_callback, NULL);
	callbacks_registered = true;
}
