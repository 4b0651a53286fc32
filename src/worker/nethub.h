/* SPDX-License-Identifier: MIT */
/* nethub.h - the relay hub of a parallel cluster's network (NICNET=relay):
 * one per job, a child process of `vigil worker`. The job's QEMU joins it
 * with its stream netdev on 127.0.0.1 (4-byte big-endian length, then the
 * Ethernet frame); the hub passes every frame of its VM to the hubs of
 * the cluster's other jobs over TCP, framed the same way after a hello,
 * and their frames to its VM. Only unicast TCP between worker hosts: no
 * multicast, no root. The hub of the larger job id connects to the
 * smaller one; one that goes away is dropped and tried again each second.
 * Peer addresses come from the worker (the server's GET /api/v1/mm/relay)
 * over a pipe, one "JOB HOST:PORT" line each. */
#ifndef VIGIL_NETHUB_H
#define VIGIL_NETHUB_H

#include <stddef.h>
#include <sys/types.h>

/* QEMU's largest frame (NET_BUFSIZE) and the bytes one connection may have
 * waiting to be sent before further frames to it are dropped (a switch
 * drops too). */
#define NETHUB_FRAME_MAX 69632u
#define NETHUB_QUEUE_MAX (1u << 20)
#define NETHUB_MAX_PEERS 64

struct nethub {
	pid_t pid;          /* the hub process, 0: none */
	int ctl;            /* write end of its peer pipe, -1: none */
	unsigned vm_port;   /* 127.0.0.1: the VM's stream netdev connects here */
	unsigned peer_port; /* every address: the other hubs connect here */
};

/* Fill h without a hub. */
void nethub_init(struct nethub *h);
/* Start the hub of job_id (on network vlan: a hello naming another one is
 * refused): both listening sockets are open when it returns. 0, or an
 * error code with err filled. */
int nethub_start(struct nethub *h, long long job_id, long long vlan, char *err, size_t errlen);
/* Tell the hub where job_id's hub listens ("host:port"; a new address
 * replaces the old). 0, or an error code. */
int nethub_peer(struct nethub *h, long long job_id, const char *addr);
/* Stop the hub (it logs its frame counters) and wait for it. */
void nethub_release(struct nethub *h);

#endif
