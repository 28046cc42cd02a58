/*
 * norm_peer: a small libnorm (Debian libnorm-dev) peer for linklab's NORM
 * interop test (interop/linklab-norm.sh).
 *
 *   norm_peer send ADDR PORT NODE-ID RATE-BPS SEGMENT K PARITY AUTO-PARITY ACKER-ID FILE...
 *       Sends each FILE as a NORM data object from a transmit-only session
 *       (feedback arrives unicast at its transmit port), asks ACKER-ID to
 *       acknowledge a watermark on the last object, and exits 0 once the
 *       watermark is acknowledged, 1 if it is not.
 *   norm_peer recv ADDR PORT NODE-ID COUNT OUTDIR
 *       Receives COUNT objects with unicast NACKs and writes them to
 *       OUTDIR/rx.1, rx.2, ... in order of completion; exits 0 when all
 *       arrived.
 *
 * Both give up after 120 s. Progress goes to standard error. The sender
 * uses FEC Encoding ID 5 (RFC 5510 Reed-Solomon over GF(2^8)).
 *
 * Written in the common subset of C and C++ and compiled as C++
 * (`g++ -x c++ norm_peer.c -lnorm`): Debian's normApi.h (libnorm 1.5.9)
 * declares C++ references and default arguments, so a C compiler rejects it.
 */
#include <normApi.h>
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/select.h>
#include <time.h>

static char *read_file(const char *path, long *len)
{
    FILE *f = fopen(path, "rb");
    if (!f) { perror(path); return NULL; }
    fseek(f, 0, SEEK_END);
    *len = ftell(f);
    rewind(f);
    char *buf = (char *)malloc(*len > 0 ? *len : 1);
    if (!buf || fread(buf, 1, *len, f) != (size_t)*len) { perror(path); fclose(f); return NULL; }
    fclose(f);
    return buf;
}

/* Waits up to the deadline for the next libnorm event; 0 on time-out. */
static int next_event(NormInstanceHandle inst, NormEvent *ev, time_t deadline)
{
    NormDescriptor fd = NormGetDescriptor(inst);
    for (;;) {
        time_t left = deadline - time(NULL);
        if (left <= 0) return 0;
        fd_set set;
        FD_ZERO(&set);
        FD_SET(fd, &set);
        struct timeval tv = {left, 0};
        int n = select(fd + 1, &set, NULL, NULL, &tv);
        if (n < 0 && errno == EINTR) continue;
        if (n <= 0) return 0;
        if (NormGetNextEvent(inst, ev, true)) return 1;
    }
}

static int do_send(char **argv, int argc)
{
    const char *addr = argv[2];
    int port = atoi(argv[3]);
    NormNodeId node = (NormNodeId)strtoul(argv[4], NULL, 0);
    double rate = atof(argv[5]);
    int segment = atoi(argv[6]), k = atoi(argv[7]), parity = atoi(argv[8]), autop = atoi(argv[9]);
    NormNodeId acker = (NormNodeId)strtoul(argv[10], NULL, 0);

    NormInstanceHandle inst = NormCreateInstance(false);
    NormSessionHandle s = NormCreateSession(inst, addr, port, node);
    if (s == NORM_SESSION_INVALID) { fprintf(stderr, "norm_peer: NormCreateSession failed\n"); return 1; }
    NormSetTxOnly(s, true, false);
    NormSetTxRate(s, rate);
    NormSetAutoParity(s, (unsigned char)autop);
    NormAddAckingNode(s, acker);
    srand((unsigned)time(NULL));
    if (!NormStartSender(s, (NormSessionId)rand(), 4 * 1024 * 1024, segment, k, parity, 5)) {
        fprintf(stderr, "norm_peer: NormStartSender failed\n");
        return 1;
    }
    NormObjectHandle last = NORM_OBJECT_INVALID;
    for (int i = 11; i < argc; i++) {
        long len;
        char *buf = read_file(argv[i], &len);
        if (!buf) return 1;
        last = NormDataEnqueue(s, buf, (unsigned int)len, NULL, 0);
        if (last == NORM_OBJECT_INVALID) { fprintf(stderr, "norm_peer: enqueue %s failed\n", argv[i]); return 1; }
        fprintf(stderr, "norm_peer: enqueued %s (%ld octets)\n", argv[i], len);
    }
    NormSetWatermark(s, last, true);
    time_t deadline = time(NULL) + 120;
    NormEvent ev;
    while (next_event(inst, &ev, deadline)) {
        if (ev.type == NORM_TX_WATERMARK_COMPLETED) {
            NormAckingStatus st = NormGetAckingStatus(s, acker);
            fprintf(stderr, "norm_peer: watermark completed, acking status %d\n", (int)st);
            NormStopSender(s);
            NormDestroyInstance(inst);
            return st == NORM_ACK_SUCCESS ? 0 : 1;
        }
    }
    fprintf(stderr, "norm_peer: timed out waiting for the watermark\n");
    return 1;
}

static int do_recv(char **argv)
{
    const char *addr = argv[2];
    int port = atoi(argv[3]);
    NormNodeId node = (NormNodeId)strtoul(argv[4], NULL, 0);
    int count = atoi(argv[5]);
    const char *outdir = argv[6];

    NormInstanceHandle inst = NormCreateInstance(false);
    NormSessionHandle s = NormCreateSession(inst, addr, port, node);
    if (s == NORM_SESSION_INVALID) { fprintf(stderr, "norm_peer: NormCreateSession failed\n"); return 1; }
    NormSetDefaultUnicastNack(s, true);
    if (!NormStartReceiver(s, 4 * 1024 * 1024)) { fprintf(stderr, "norm_peer: NormStartReceiver failed\n"); return 1; }
    int got = 0;
    time_t deadline = time(NULL) + 120;
    NormEvent ev;
    while (got < count && next_event(inst, &ev, deadline)) {
        if (ev.type == NORM_RX_OBJECT_COMPLETED && NormObjectGetType(ev.object) == NORM_OBJECT_DATA) {
            char path[4096];
            snprintf(path, sizeof path, "%s/rx.%d", outdir, ++got);
            FILE *f = fopen(path, "wb");
            if (!f) { perror(path); return 1; }
            fwrite(NormDataAccessData(ev.object), 1, (size_t)NormObjectGetSize(ev.object), f);
            fclose(f);
            fprintf(stderr, "norm_peer: object complete (%lld octets) -> %s\n",
                    (long long)NormObjectGetSize(ev.object), path);
        } else if (ev.type == NORM_RX_OBJECT_ABORTED) {
            fprintf(stderr, "norm_peer: object aborted\n");
        }
    }
    /* Linger so the sender's watermark request gets its acknowledgement. */
    time_t linger = time(NULL) + 3;
    while (got == count && next_event(inst, &ev, linger)) {}
    NormStopReceiver(s);
    NormDestroyInstance(inst);
    if (got < count) { fprintf(stderr, "norm_peer: %d of %d objects\n", got, count); return 1; }
    return 0;
}

int main(int argc, char **argv)
{
    if (argc >= 12 && strcmp(argv[1], "send") == 0) return do_send(argv, argc);
    if (argc == 7 && strcmp(argv[1], "recv") == 0) return do_recv(argv);
    fprintf(stderr, "usage: norm_peer send ADDR PORT NODE-ID RATE-BPS SEGMENT K PARITY AUTO-PARITY ACKER-ID FILE...\n"
                    "       norm_peer recv ADDR PORT NODE-ID COUNT OUTDIR\n");
    return 2;
}
