/* spinlock.c — a queued spinlock (Linux's qspinlock idea, MCS queue): one tracked word holds
 * the locked bit and the queue's tail; each waiter but the first waits on its own node.
 * Not a sleeping mutex, and not reentrant.
 *
 * Why queued: with a test-and-set lock every release wakes every waiter, and all of them
 * race for the line (a thundering herd that Linux replaced with qspinlock in 4.2). Here only
 * the head of the queue watches the lock word; the others wait on their own node and are
 * handed over one at a time, in arrival order. In simulation this is both what Linux's lock
 * does and far cheaper to simulate (one wake-up per hand-over, not N).
 *
 * Like Linux's per-CPU qnodes, each execution context owns one node at a fixed address: a
 * thread-local natively, one line per fiber in simulation. A node is only in use inside
 * plat_spin_lock (it is released once the lock is taken and the successor handed over), and
 * a waiter takes no other lock meanwhile, so one per context suffices. (A node on the stack
 * worked too, but made simulated results depend on the compiler's frame layout.)
 */
#include "iommulab/plat.h"

#define LOCKED 1ull

/* A waiter's node: in use only while it waits (until it owns the lock). */
struct mcs_node {
	plat_word64 next; /* the waiter queued behind this one (a host pointer), 0 if none yet */
	plat_word32 go;   /* set by the predecessor: this waiter is now the head */
};
_Static_assert(sizeof(struct mcs_node) <= PLAT_LOCK_NODE_BYTES, "lock node too large");

static struct mcs_node *my_node(void)
{
	static _Thread_local _Alignas(PLAT_CACHELINE) struct mcs_node native_node;

	if (plat_unlikely(plat_sim))
		return plat_sim->lock_node();
	return &native_node;
}

static bool lock_bit_clear(uint64_t v, void *arg)
{
	return !(v & LOCKED);
}

static bool nonzero(uint64_t v, void *arg)
{
	return v != 0;
}

void plat_spin_init(plat_spinlock *l, const char *name)
{
	plat_store64(&l->word, 0);
	plat_track(&l->word, name);
}

bool plat_spin_trylock(plat_spinlock *l)
{
	uint64_t expected = 0;

	return plat_cmpxchg64(&l->word, &expected, LOCKED);
}

/* Append node to the queue; returns the previous tail (NULL if the queue was empty). */
static struct mcs_node *enqueue(plat_spinlock *l, struct mcs_node *node)
{
	uint64_t old = plat_load64(&l->word);

	while (!plat_cmpxchg64(&l->word, &old, (old & LOCKED) | (uintptr_t)node))
		;
	return (struct mcs_node *)(uintptr_t)(old & ~LOCKED);
}

/* As the queue's head: wait for the holder to release, then take the lock. Returns true if
 * other waiters are queued behind us (we still owe them a hand-over). */
static bool take_as_head(plat_spinlock *l, struct mcs_node *node)
{
	for (;;) {
		uint64_t old, neu;

		plat_poll(&l->word, sizeof(l->word), lock_bit_clear, NULL, 0);
		old = plat_load64(&l->word);
		if (old & LOCKED)
			continue;
		/* Alone in the queue: clear the tail as we lock. Else keep the tail. */
		neu = (old == (uintptr_t)node) ? LOCKED : (old | LOCKED);
		if (plat_cmpxchg64(&l->word, &old, neu))
			return neu != LOCKED;
	}
}

static void spin_lock(plat_spinlock *l)
{
	struct mcs_node *node, *prev, *next;

	if (plat_spin_trylock(l))
		return; /* uncontended: one atomic, as in Linux */
	node = my_node();
	plat_store64(&node->next, 0);
	plat_store32(&node->go, 0);
	prev = enqueue(l, node);
	if (prev) {
		plat_store64(&prev->next, (uintptr_t)node);
		plat_poll(&node->go, sizeof(node->go), nonzero, NULL, 0);
	}
	if (!take_as_head(l, node))
		return;
	/* Someone is behind us: wait until it has linked itself, then make it the head. */
	plat_poll(&node->next, sizeof(node->next), nonzero, NULL, 0);
	next = (struct mcs_node *)(uintptr_t)plat_load64(&node->next);
	plat_store32(&next->go, 1);
}

void plat_spin_lock(plat_spinlock *l)
{
	plat_scope_enter(PLAT_SCOPE_SPIN_LOCK);
	spin_lock(l);
	plat_scope_leave();
}

/* Linux stores the locked byte; the tail beside it in this word must survive, hence the
 * atomic clear, charged as the store it is in Linux (plat_release_and64). */
void plat_spin_unlock(plat_spinlock *l)
{
	plat_release_and64(&l->word, ~LOCKED);
}
