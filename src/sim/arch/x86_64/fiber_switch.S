/* fiber_switch.S — x86-64 (System V) fiber context switch: saves the callee-saved registers,
 * MXCSR and the x87 control word on the old stack and restores them from the new one. It is
 * not a general setjmp: caller-saved state is, by the ABI, already dead across the call.
 */
	.text

/* void fiber_arch_switch(struct fiber_arch_ctx *from (rdi), struct fiber_arch_ctx *to (rsi)) */
	.globl	fiber_arch_switch
	.type	fiber_arch_switch, @function
	.globl	fiber_arch_exit_to
	.type	fiber_arch_exit_to, @function
	.p2align 4
fiber_arch_switch:
fiber_arch_exit_to:
	pushq	%rbp
	pushq	%rbx
	pushq	%r12
	pushq	%r13
	pushq	%r14
	pushq	%r15
	subq	$8, %rsp
	stmxcsr	(%rsp)
	fnstcw	4(%rsp)
	/* Our MXCSR and control word, to compare, read back one store at a time: one 8-byte
	 * load over the two stores cannot be forwarded from them and stalled every switch
	 * (a third of the switch's host time at 128 simulated CPUs). */
	movl	(%rsp), %eax
	movzwl	4(%rsp), %ecx
	movq	%rsp, (%rdi)		/* from->sp */
	movq	(%rsi), %rsp		/* to->sp */
	/* Loading MXCSR and the x87 control word is slow and they almost never differ between
	 * fibers: load them only when they do. */
	cmpl	(%rsp), %eax
	je	1f
	ldmxcsr	(%rsp)
1:	cmpw	4(%rsp), %cx
	je	2f
	fldcw	4(%rsp)
2:	addq	$8, %rsp
	popq	%r15
	popq	%r14
	popq	%r13
	popq	%r12
	popq	%rbx
	popq	%rbp
	ret
	.size	fiber_arch_switch, .-fiber_arch_switch
	.size	fiber_arch_exit_to, .-fiber_arch_exit_to

/* First switch-in of a new fiber lands here (see fiber_x86_64.c for the frame): rbx holds the
 * entry function, r12 its argument, and rsp is 16-byte aligned as a call requires. */
	.globl	fiber_arch_trampoline
	.type	fiber_arch_trampoline, @function
	.p2align 4
fiber_arch_trampoline:
	movq	%r12, %rdi
	xorl	%ebp, %ebp		/* end of the frame chain, for debuggers */
	callq	*%rbx
	ud2				/* the entry never returns */
	.size	fiber_arch_trampoline, .-fiber_arch_trampoline

	.section .note.GNU-stack,"",@progbits
