/* SPDX-License-Identifier: MIT */
/* test_proc.c - util/proc.c: how long a process waited for a CPU
 * (proc_run_delay_ns), measured on a child that shares one CPU with us. */
#include <errno.h>
#include <fcntl.h>
#include <sched.h>
#include <signal.h>
#include <stdint.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>
#include "util/proc.h"
#include "unit.h"

/* Spin until this process has used `sec` of CPU time. */
static void spin_cpu(double sec)
{
	struct timespec ts;

	do
		clock_gettime(CLOCK_PROCESS_CPUTIME_ID, &ts);
	while (ts.tv_sec + ts.tv_nsec / 1e9 < sec);
}

TEST(proc_run_delay_counts_time_waiting_for_a_cpu)
{
	cpu_set_t one, was;
	int go[2], cpu = -1;
	char c;
	pid_t pid;
	int64_t delay;

	CHECK_INT(proc_run_delay_ns(-1), -1);
	if (proc_run_delay_ns(getpid()) < 0) {
		printf("# no /proc/<pid>/task/*/schedstat here: skipped\n");
		return;
	}
	/* Both of us on one CPU we may use: while one runs, the other waits. */
	CHECK(sched_getaffinity(0, sizeof(was), &was) == 0);
	for (int i = 0; i < CPU_SETSIZE && cpu < 0; i++)
		if (CPU_ISSET(i, &was))
			cpu = i;
	CPU_ZERO(&one);
	CPU_SET(cpu, &one);
	CHECK(sched_setaffinity(0, sizeof(one), &one) == 0);
	CHECK(pipe(go) == 0);
	pid = fork();
	CHECK(pid >= 0);
	if (pid == 0) {
		/* Spin until told to stop, then wait to be killed. */
		fcntl(go[0], F_SETFL, O_NONBLOCK);
		while (read(go[0], &c, 1) != 1)
			;
		pause();
		_exit(0);
	}
	/* 0.3 s of our CPU time, on the CPU the spinning child wants too. */
	spin_cpu(0.3);
	CHECK(write(go[1], "x", 1) == 1);
	delay = proc_run_delay_ns(pid);
	kill(pid, SIGKILL);
	waitpid(pid, NULL, 0);
	close(go[0]);
	close(go[1]);
	CHECK(sched_setaffinity(0, sizeof(was), &was) == 0);
	/* It waited at least while we ran most of our 0.3 s. */
	if (delay < 100000000)
		FAIL("the child waited %lld ns for the CPU, expected over 0.1 s", (long long)delay);
	/* Gone: nothing to read. */
	CHECK_INT(proc_run_delay_ns(pid), -1);
}
