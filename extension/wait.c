/*-------------------------------------------------------------------------
 *
 * wait.c
 *	  The blocking claim: a claim that finds no job sleeps until an enqueue
 *	  into one of its queues commits, a delayed job may have come due, or
 *	  its wait ends.
 *
 * Waiters register in a shared array (one slot per waiting backend: its
 * latch, database and the hashes of its queue names).  A transaction that
 * makes jobs ready (enqueue, release, retry, ...) notes the queue and how
 * many jobs (wake.c); when it commits, its commit callback wakes that many
 * not-yet-woken waiters of the queue (jobq_wait_wake).  The callback runs
 * after the commit is visible to other backends, so a woken waiter always
 * finds the job (unless another claimer was faster); a rollback, or a
 * rolled-back savepoint, wakes nobody.  Waking one waiter per job, not all
 * of them, avoids a thundering herd.
 *
 * NB: a waiter registers BEFORE its first claim attempt.  An enqueue that
 * commits between that attempt and the sleep then finds the slot and sets
 * the latch, and WaitLatch returns at once: no wakeup is lost.
 *
 * A slot also records the hash of the claim's worker label.  A worker
 * signal (workers.c) that commits sets the latch of that worker's slot and
 * marks it signalled: the claim then returns empty at once, and the worker
 * heartbeats to read what it is asked.
 *
 * Delayed jobs are noted too (enqueue with run_at or delay, a failure
 * retried after its backoff, a lease expired by a sweep): the woken waiter
 * finds nothing yet, reads when the earliest job of its queues is due, and
 * sleeps until then.  Waiters thus sleep until something happens instead of
 * polling; with a hundred of them, polling every second cost producers a
 * quarter of their throughput (bench "Producers with idle waiting claims").
 *
 * All of this needs shared memory, so it works only with
 * shared_preload_libraries = 'jobq'.  Without it, a waiting claim re-checks
 * every JOBQ_WAIT_POLL_MS.  Either way a waiter also re-checks every
 * jobq.claim_recheck_interval, a safety net for jobs that became ready
 * without a note (a COMMIT PREPARED of an enqueue, rows written by hand),
 * and the interval at which it notices a client that went away.
 *
 * Copyright (c) 2026, the jobq developers
 *
 * IDENTIFICATION
 *	  extension/wait.c
 *
 *-------------------------------------------------------------------------
 */
#include "jobq.h"

#include "common/hashfn.h"
#include "miscadmin.h"
#include "pgstat.h"
#include "storage/ipc.h"
#include "storage/latch.h"
#include "storage/lwlock.h"
#include "storage/proc.h"
#include "storage/shmem.h"
#include "utils/timestamp.h"
#include "utils/wait_event.h"

/* One waiting backend */
typedef struct JobqWaiter
{
	Latch	   *latch;			/* NULL: the slot is free */
	Oid			dboid;
	bool		woken;			/* a commit already signalled this waiter */
	pg_atomic_uint64 wake_at;	/* when its sleep ends (TimestampTz); 0 while
								 * it is awake */
	bool		has_worker;		/* the claim has a worker label */
	bool		signalled;		/* a worker signal for it committed */
	uint32		worker;			/* hash of that label */
	int			nqueues;
	uint32		queues[JOBQ_WAIT_QUEUES_MAX];	/* hashes of its queue names: as
												 * many as any claim takes */
} JobqWaiter;

/*
 * Waiters per (database, queue) hash bucket.  A commit looks only at the
 * buckets of the queues it made jobs ready in, without any lock; producers
 * of queues nobody waits on never touch the waiter array's lock, however
 * many claims wait on other queues.
 */
#define JOBQ_WAIT_BUCKETS	1024

typedef struct JobqWaitShared
{
	LWLock	   *lock;			/* protects slots[] */
	int			nslots;
	pg_atomic_uint32 nwaiting;	/* slots in use */
	pg_atomic_uint64 wakeups;	/* latches set by commits, ever */
	pg_atomic_uint32 buckets[JOBQ_WAIT_BUCKETS];	/* waiters per bucket */
	JobqWaiter	slots[FLEXIBLE_ARRAY_MEMBER];
} JobqWaitShared;

static JobqWaitShared *wait_shared = NULL;
static int	my_slot = -1;

/*
 * jobq_wait_slots
 *	  How many waiter slots to reserve: every backend that could run a
 *	  claim at once.
 */
static int
jobq_wait_slots(void)
{
	return MaxConnections + max_worker_processes + 8;
}

/*
 * jobq_wait_shmem_size
 */
Size
jobq_wait_shmem_size(void)
{
	return add_size(offsetof(JobqWaitShared, slots),
					mul_size(jobq_wait_slots(), sizeof(JobqWaiter)));
}

/*
 * jobq_wait_shmem_init
 *	  Attach to (creating on first call) the shared waiter array.  Called
 *	  from the shmem_startup_hook, under AddinShmemInitLock.
 */
void
jobq_wait_shmem_init(void)
{
	bool		found;

	wait_shared = ShmemInitStruct("jobq waiters", jobq_wait_shmem_size(), &found);
	if (!found)
	{
		wait_shared->lock = &(GetNamedLWLockTranche("jobq"))->lock;
		wait_shared->nslots = jobq_wait_slots();
		pg_atomic_init_u32(&wait_shared->nwaiting, 0);
		pg_atomic_init_u64(&wait_shared->wakeups, 0);
		for (int i = 0; i < JOBQ_WAIT_BUCKETS; i++)
			pg_atomic_init_u32(&wait_shared->buckets[i], 0);
		for (int i = 0; i < wait_shared->nslots; i++)
		{
			wait_shared->slots[i].latch = NULL;
			pg_atomic_init_u64(&wait_shared->slots[i].wake_at, 0);
		}
	}
}

/*
 * jobq_wait_queue_hash
 *	  The hash by which waiters know a queue name of len bytes.
 */
uint32
jobq_wait_queue_hash(const char *name, int len)
{
	return hash_bytes((const unsigned char *) name, len);
}

/*
 * bucket_of
 *	  The waiter bucket of a queue hash in this database.
 */
static pg_atomic_uint32 *
bucket_of(Oid dboid, uint32 queue)
{
	return &wait_shared->buckets[hash_combine(queue, dboid) % JOBQ_WAIT_BUCKETS];
}

/*
 * wake_waiters
 *	  Wake up to note->count waiters of note->hash in this database that
 *	  no commit has woken yet and that would otherwise sleep past
 *	  note->due.  A waiter that is awake (wake_at 0) may have read the
 *	  queue before this commit, so it is woken: its next sleep then ends at
 *	  once and it looks again.
 */
static void
wake_waiters(const JobqReadyNote *note)
{
	int64		left = note->count;

	for (int i = 0; i < wait_shared->nslots && left > 0; i++)
	{
		JobqWaiter *w = &wait_shared->slots[i];
		uint64		wake_at;

		if (w->latch == NULL || w->woken || w->dboid != MyDatabaseId)
			continue;
		wake_at = pg_atomic_read_u64(&w->wake_at);
		if (wake_at != 0 && note->due >= (TimestampTz) wake_at)
			continue;			/* it wakes up by then anyway */
		for (int q = 0; q < w->nqueues; q++)
			if (w->queues[q] == note->hash)
			{
				w->woken = true;
				SetLatch(w->latch);
				pg_atomic_fetch_add_u64(&wait_shared->wakeups, 1);
				left--;
				break;
			}
	}
}

/*
 * signal_waiters
 *	  Wake, for good, the waiting claims of the worker label of a signal
 *	  note in this database.
 */
static void
signal_waiters(const JobqReadyNote *note)
{
	for (int i = 0; i < wait_shared->nslots; i++)
	{
		JobqWaiter *w = &wait_shared->slots[i];

		if (w->latch != NULL && w->has_worker && w->worker == note->hash &&
			w->dboid == MyDatabaseId)
		{
			w->signalled = true;
			SetLatch(w->latch);
		}
	}
}

/*
 * jobq_wait_wake
 *	  At commit (wake.c): wake waiters for the jobs of notes, and those of
 *	  signalled workers.  Cheap when nobody waits on their queues: no lock
 *	  is taken.
 */
void
jobq_wait_wake(const JobqReadyNote *notes, int n)
{
	bool		locked = false;

	if (wait_shared == NULL || pg_atomic_read_u32(&wait_shared->nwaiting) == 0)
		return;

	/*
	 * NB: our commit is visible by now; the barrier keeps the bucket reads
	 * below from being done before it.
	 */
	pg_memory_barrier();
	for (int i = 0; i < n; i++)
	{
		if (notes[i].signal)
		{
			if (!locked)
			{
				LWLockAcquire(wait_shared->lock, LW_EXCLUSIVE);
				locked = true;
			}
			signal_waiters(&notes[i]);
			continue;
		}

		/*
		 * NB: a waiter raises its bucket before its first claim attempt, so
		 * a zero here means nobody could have missed this commit's jobs.
		 */
		if (pg_atomic_read_u32(bucket_of(MyDatabaseId, notes[i].hash)) == 0)
			continue;
		if (!locked)
		{
			LWLockAcquire(wait_shared->lock, LW_EXCLUSIVE);
			locked = true;
		}
		wake_waiters(&notes[i]);
	}
	if (locked)
		LWLockRelease(wait_shared->lock);
}

/*
 * unregister_at_exit
 *	  A backend that dies while waiting (FATAL, shutdown) frees its slot.
 */
static void
unregister_at_exit(int code, Datum arg)
{
	jobq_wait_unregister();
}

/*
 * jobq_wait_register
 *	  Take a waiter slot for queues (a text[] of validated names), for a
 *	  claim with the worker label worker (or NULL).  Returns false when
 *	  waiting on latches is not possible (not preloaded, or no free slot):
 *	  the caller then polls.
 */
bool
jobq_wait_register(Datum *queues, int nqueues, text *worker)
{
	static bool exit_hook = false;
	JobqWaiter *w = NULL;

	if (wait_shared == NULL || nqueues > JOBQ_WAIT_QUEUES_MAX)
		return false;
	if (!exit_hook)
	{
		before_shmem_exit(unregister_at_exit, (Datum) 0);
		exit_hook = true;
	}

	LWLockAcquire(wait_shared->lock, LW_EXCLUSIVE);
	for (int i = 0; i < wait_shared->nslots; i++)
		if (wait_shared->slots[i].latch == NULL)
		{
			my_slot = i;
			w = &wait_shared->slots[i];
			break;
		}
	if (w != NULL)
	{
		w->dboid = MyDatabaseId;
		w->woken = false;
		w->signalled = false;
		w->has_worker = worker != NULL;
		w->worker = worker != NULL ?
			jobq_wait_queue_hash(VARDATA_ANY(worker), VARSIZE_ANY_EXHDR(worker)) : 0;
		pg_atomic_write_u64(&w->wake_at, 0);
		w->nqueues = nqueues;
		for (int q = 0; q < nqueues; q++)
		{
			text	   *name = DatumGetTextPP(queues[q]);

			w->queues[q] = jobq_wait_queue_hash(VARDATA_ANY(name), VARSIZE_ANY_EXHDR(name));
		}
		w->latch = MyLatch;
		pg_atomic_fetch_add_u32(&wait_shared->nwaiting, 1);
		for (int q = 0; q < nqueues; q++)
			pg_atomic_fetch_add_u32(bucket_of(MyDatabaseId, w->queues[q]), 1);
	}
	LWLockRelease(wait_shared->lock);
	return w != NULL;
}

/*
 * jobq_wait_rearm
 *	  Before sleeping again after a wakeup that found nothing: let the next
 *	  commit wake this waiter again.
 */
void
jobq_wait_rearm(void)
{
	if (wait_shared == NULL || my_slot < 0)
		return;
	LWLockAcquire(wait_shared->lock, LW_EXCLUSIVE);
	wait_shared->slots[my_slot].woken = false;
	LWLockRelease(wait_shared->lock);
}

/*
 * jobq_wait_hold
 *	  The claim of this waiter will take no job (its worker is asked not
 *	  to): it waits for signals only, so that commits of jobs wake other
 *	  waiters instead.
 */
void
jobq_wait_hold(void)
{
	JobqWaiter *w;

	if (wait_shared == NULL || my_slot < 0)
		return;
	LWLockAcquire(wait_shared->lock, LW_EXCLUSIVE);
	w = &wait_shared->slots[my_slot];
	for (int q = 0; q < w->nqueues; q++)
		pg_atomic_fetch_sub_u32(bucket_of(w->dboid, w->queues[q]), 1);
	w->nqueues = 0;
	LWLockRelease(wait_shared->lock);
}

/*
 * jobq_wait_signal_self
 *	  Mark this waiter signalled, as a committed worker signal would: its
 *	  claim returns at its first sleep (workers.c, a worker not yet told).
 */
void
jobq_wait_signal_self(void)
{
	if (wait_shared == NULL || my_slot < 0)
		return;
	LWLockAcquire(wait_shared->lock, LW_EXCLUSIVE);
	wait_shared->slots[my_slot].signalled = true;
	LWLockRelease(wait_shared->lock);
	SetLatch(MyLatch);
}

/*
 * jobq_wait_signalled
 *	  Whether a worker signal for this waiter's label committed since it
 *	  registered: its claim is to return now.
 */
bool
jobq_wait_signalled(void)
{
	bool		signalled;

	if (wait_shared == NULL || my_slot < 0)
		return false;
	LWLockAcquire(wait_shared->lock, LW_SHARED);
	signalled = wait_shared->slots[my_slot].signalled;
	LWLockRelease(wait_shared->lock);
	return signalled;
}

/*
 * jobq_wait_unregister
 *	  Free this backend's slot, if it holds one.  Safe to call twice.
 */
void
jobq_wait_unregister(void)
{
	if (wait_shared == NULL || my_slot < 0)
		return;
	LWLockAcquire(wait_shared->lock, LW_EXCLUSIVE);
	{
		JobqWaiter *w = &wait_shared->slots[my_slot];

		for (int q = 0; q < w->nqueues; q++)
			pg_atomic_fetch_sub_u32(bucket_of(w->dboid, w->queues[q]), 1);
		w->latch = NULL;
	}
	pg_atomic_fetch_sub_u32(&wait_shared->nwaiting, 1);
	LWLockRelease(wait_shared->lock);
	my_slot = -1;
}

/*
 * jobq_wait_available
 *	  Whether latch wakeups work in this server (jobq was preloaded).
 */
bool
jobq_wait_available(void)
{
	return wait_shared != NULL;
}

/*
 * jobq_wait_counters
 *	  Waiting backends now, and wakeups sent since server start.
 */
void
jobq_wait_counters(int64 *waiting, int64 *wakeups)
{
	*waiting = wait_shared ? pg_atomic_read_u32(&wait_shared->nwaiting) : 0;
	*wakeups = wait_shared ? (int64) pg_atomic_read_u64(&wait_shared->wakeups) : 0;
}

/*
 * pq_check_connection is declared in libpq/libpq.h, whose libpq-be.h needs
 * the GSSAPI headers of the server's build; declaring the one function we
 * use (PostgreSQL 14 and later) spares extension builders that dependency.
 */
extern bool pq_check_connection(void);

/*
 * jobq_wait_sleep
 *	  Sleep up to timeout_ms or until the latch is set, then clear it and
 *	  serve interrupts: a cancel or statement_timeout sets the latch, so it
 *	  ends the wait at once, with its usual error.
 *
 *	  After each sleep the client's socket is checked too: a client that
 *	  went away mid-wait would otherwise keep its backend, and a connection
 *	  slot, until the wait ran out (up to JOBQ_WAIT_MAX_USECS).  Its backend
 *	  ends instead, as it would on its next read.  Sleeps are at most
 *	  jobq.claim_recheck_interval long, so this is noticed within that.
 */
void
jobq_wait_sleep(long timeout_ms)
{
	JobqWaiter *w = (wait_shared != NULL && my_slot >= 0) ? &wait_shared->slots[my_slot] : NULL;

	if (timeout_ms > 0)
	{
		/*
		 * NB: published before sleeping; a commit that reads it skips us
		 * only for jobs due after we wake anyway (see wake_waiters).
		 */
		if (w != NULL)
			pg_atomic_write_u64(&w->wake_at,
								(uint64) TimestampTzPlusMilliseconds(GetCurrentTimestamp(),
																	 timeout_ms));
		(void) WaitLatch(MyLatch, WL_LATCH_SET | WL_TIMEOUT | WL_EXIT_ON_PM_DEATH,
						 timeout_ms, PG_WAIT_EXTENSION);
		if (w != NULL)
			pg_atomic_write_u64(&w->wake_at, 0);
	}
	ResetLatch(MyLatch);
	CHECK_FOR_INTERRUPTS();
	if (MyProcPort != NULL && !pq_check_connection())
		ereport(FATAL,
				(errcode(ERRCODE_CONNECTION_FAILURE),
				 errmsg("connection to client lost during a waiting claim")));
}
