/* fiber_aarch64.c — builds the initial frame of an AArch64 fiber so that the first
 * fiber_arch_switch() into it returns (via x30) into fiber_arch_trampoline. The switch itself
 * is in fiber_switch.S; this file is not used under sanitizers (the ucontext variant is).
 */
#include <errno.h>
#include <stdint.h>
#include <string.h>

#include "sim/fiber_arch.h"

const char fiber_arch_name[] = "aarch64";

void fiber_arch_trampoline(void);

#define FRAME_BYTES 176

int fiber_arch_init_main(struct fiber_arch_ctx *ctx)
{
	ctx->sp = NULL; /* filled by the first switch away from the host stack */
	ctx->priv = NULL;
	return 0;
}

int fiber_arch_init(struct fiber_arch_ctx *ctx, void *stack, size_t size, fiber_arch_entry entry,
		    void *arg)
{
	uintptr_t top = ((uintptr_t)stack + size) & ~(uintptr_t)15;
	uint64_t *frame;

	if (!stack || size < 4096 || !entry)
		return -EINVAL;
	frame = (uint64_t *)(top - FRAME_BYTES);
	memset(frame, 0, FRAME_BYTES);
	frame[0] = (uint64_t)(uintptr_t)entry;              /* x19 */
	frame[1] = (uint64_t)(uintptr_t)arg;                /* x20 */
	frame[11] = (uint64_t)(uintptr_t)fiber_arch_trampoline; /* x30 */
	frame[20] = 0;                                      /* FPCR: round to nearest, no traps */
	ctx->sp = frame;
	ctx->priv = NULL;
	return 0;
}

void fiber_arch_destroy(struct fiber_arch_ctx *ctx)
{
	ctx->sp = NULL;
}
