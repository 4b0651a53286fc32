/* SPDX-License-Identifier: MIT */
/* nethub.h - the relay hub of a parallel cluster's network (NICNET=relay):
 * one per job, a child process of `vigil worker`. The job's QEMU joins it
 * with its stream netdev on 127.0.0.1 (4-byte big-endian length, then the
 * Ethernet frame); the hub passes every frame of its VM to the hubs of
 * the cluster's other jobs over TCP (IPv4 or IPv6), after a handshake
 * that proves both sides know the cluster's secret (HMAC-SHA256 over both
 * sides' nonces: see nethub.c), sealed with keys of that handshake
 * (AES-256-GCM), and their frames to its VM. Only unicast TCP between worker hosts: no multicast, no
 * root. The hub of the larger job id connects to the smaller one; one
 * that goes away is dropped and tried again each second. Peer addresses
 * and the secret come from the worker (the server's GET /api/v1/mm/relay)
 * over a pipe, one line each. */
#ifndef VIGIL_NETHUB_H
#define VIGIL_NETHUB_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <sys/types.h>

/* QEMU's largest frame (NET_BUFSIZE) and the bytes one connection may have
 * waiting to be sent before further frames to it are dropped (a switch
 * drops too). */
#define NETHUB_FRAME_MAX 69632u
#define NETHUB_QUEUE_MAX (1u << 20)
#define NETHUB_MAX_PEERS 64
/* The handshake: a hello (magic, the connecting job's id and NICVLAN,
 * its nonce), the challenge (the listening hub's nonce and proof), the
 * connecting side's proof. A connection that has not finished it within
 * NETHUB_HANDSHAKE_S is closed. */
#define NETHUB_MAGIC "VGH2"
#define NETHUB_NONCE_LEN 16
#define NETHUB_PROOF_LEN 32
#define NETHUB_HELLO_LEN (4 + 8 + 8 + NETHUB_NONCE_LEN)
#define NETHUB_CHALLENGE_LEN (NETHUB_NONCE_LEN + NETHUB_PROOF_LEN)
#define NETHUB_HANDSHAKE_S 30.0
/* The cluster secret: lowercase hex, as the server hands it out. */
#define NETHUB_SECRET_MIN 32
#define NETHUB_SECRET_MAX 128

struct nethub {
	pid_t pid;          /* the hub process, 0: none */
	int ctl;            /* write end of its peer pipe, -1: none */
	unsigned vm_port;   /* 127.0.0.1: the VM's stream netdev connects here */
	unsigned peer_port; /* every address, IPv6 and IPv4: the other hubs connect here */
};

/* Fill h without a hub. */
void nethub_init(struct nethub *h);
/* Start the hub of job_id (on network vlan: a hello naming another one is
 * refused), its peer port peer_port (0: the kernel picks one): both
 * listening sockets are open when it returns. It accepts and makes no
 * peer connection before nethub_secret. 0, or an error code with err
 * filled. */
int nethub_start(struct nethub *h, long long job_id, long long vlan, unsigned peer_port, char *err,
		 size_t errlen);
/* Give the hub its cluster's secret (NETHUB_SECRET_MIN to _MAX lowercase
 * hex characters; a new one replaces the old for later handshakes). 0, or
 * ERR_INVALID/an error code. */
int nethub_secret(struct nethub *h, const char *secret);
/* Tell the hub where job_id's hub listens ("host:port", "[v6]:port"; a
 * new address replaces the old). 0, or an error code. */
int nethub_peer(struct nethub *h, long long job_id, const char *addr);
/* Stop the hub (it logs its frame counters) and wait for it. */
void nethub_release(struct nethub *h);

/* The proof of one side of a handshake: HMAC-SHA256 under secret of
 * "vigil-relay-1", the side ('C' the connecting hub, 'L' the listening
 * one), the connecting and the listening job's ids and the NICVLAN
 * (64-bit big-endian each) and both nonces (the connecting side's
 * first). 0 or ERR_IO. */
int nethub_proof(const char *secret, char side, long long conn_id, long long listen_id, long long vlan,
		 const unsigned char nonce_c[NETHUB_NONCE_LEN], const unsigned char nonce_l[NETHUB_NONCE_LEN],
		 unsigned char out[NETHUB_PROOF_LEN]);

/* The frames between hubs after the handshake: AES-256-GCM, each a
 * 32-bit big-endian length (of what follows), the ciphertext and the
 * 16-byte tag, the length as associated data, the IV 4 zero bytes and the
 * frame's number in its direction (from 0, 64-bit big-endian). The keys:
 * nethub_proof of the handshake with side 'c' (frames from the connecting
 * hub) and 'l' (from the listening one); never sent. */
#define NETHUB_KEY_LEN 32
#define NETHUB_TAG_LEN 16
/* Seal frame f (n bytes, at most NETHUB_FRAME_MAX) as frame number seq
 * under key into out (4 + n + NETHUB_TAG_LEN bytes). 0 or ERR_IO. */
int nethub_seal(const unsigned char key[NETHUB_KEY_LEN], uint64_t seq, const unsigned char *f, size_t n,
		unsigned char *out);
/* Open a sealed frame rec (its 4-byte length, then len bytes) as frame
 * number seq under key: its plaintext (len - NETHUB_TAG_LEN bytes) into
 * out. 0, or ERR_PROTO (forged, altered, replayed or out of order). */
int nethub_open(const unsigned char key[NETHUB_KEY_LEN], uint64_t seq, const unsigned char *rec, size_t len,
		unsigned char *out);

/* `vigil worker --relay-host`: HOST, HOST:PORT, an IPv6 address, [IPv6]
 * or [IPv6]:PORT into host as other hubs dial it (IPv6 in brackets) and
 * *port (0: none given). 0, or ERR_INVALID with err naming what is
 * expected. */
int nethub_parse_host(const char *arg, char *host, size_t hostlen, unsigned *port, char *err, size_t errlen);

#endif
