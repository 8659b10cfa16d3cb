"""The simulator's event loop written for the CPython interpreter.

:mod:`perfmodel.sim._kernel` is written for numba: flat buffers, packed
offsets, hand-written heaps.  Run by CPython the same source pays for every
offset computed, every buffer element read and every helper called with
twenty arguments.  This module is the kernel's heap path (every case but the
max-min NIC rule's scan path) again, in plain Python: the computations'
heap and each link's heap of virtual finish tags are ``heapq`` lists of
tuples, each scheduler's FIFO is a deque, per-op state lives in lists
indexed as the kernel indexes it, and the kernel's ``start_op`` (one
closure per kind of slot) and ``start_step`` are closures over that state,
so that the loop reads it from fast locals and cells.

The algorithm, the float arithmetic (each expression evaluated in the same
order) and the order of events are the kernel's, so the two give the same
results bit for bit (the tests compare them op by op); see the kernel's
module notes for the algorithm.  Ties need no care of their own: the
kernel's heaps order entries by (time, start sequence), unique per entry,
so any correct priority queue pops them in the same order.
"""

from collections import deque
from heapq import heappop, heappush

__all__ = ["run"]

INF = 1e300
#: No event: compares as the kernel's (INF, -1), after any real (time, sequence).
NONE = (INF, -1, -1, -1)


def run(op_slot, op_work, op_ndeps, succ_ptr, succ_idx, step_first, step_nops, root_ptr,
        root_idx, samples, factors, sizes, sync, sharing, cap, win, record, cpu_fcfs,
        stalls, stall_u, tmo, rto, step_start, step_end, crit, rec_i, rec_t):
    """Simulate N steps of W workers, as :func:`perfmodel.sim._kernel.run` on its heap path.

    Parameters
    ----------
    op_slot, op_work, op_ndeps, succ_ptr, succ_idx, step_first, step_nops, root_ptr, \
root_idx, samples, factors, stalls, stall_u : list
        The kernel's inputs of the same names, as Python lists.
    sizes : tuple of int
        (S servers, W workers, M most ops in a step, N steps per worker).
    sync : int
        0 async, 1 a barrier after every step.
    sharing : int
        0 "ps", 1 "fcfs", 2 all-reduce.
    cap, win, rto : float
        Per-flow rate cap and HTTP/2 window (fractions and seconds of the
        full link), retransmission timeout.
    record, cpu_fcfs, tmo : int
        Record every op; one update CPU per server; timeouts (0 none, 1 at
        the tail, 2 mid-transfer).
    step_start, step_end, crit, rec_i, rec_t : list
        Filled as the kernel fills its outputs of the same names.

    Returns
    -------
    tuple of int
        Events processed, ops recorded, and 1 if a worker could not finish
        its steps (else 0).
    """
    S, W, M, N = sizes
    NS = 4 * S
    L = 2 * S
    fcfs = sharing == 1
    # per slot: its link (-1: a computation), per link: its direction and the slot that uses it
    link_of = [sl if sl < S else S + sl - 2 * S if 2 * S <= sl < 3 * S else -1
               for sl in range(NS)]
    dir_of = [l // S for l in range(L)]
    link_slot = [l if l < S else S + l for l in range(L)]
    dlinks = (tuple(range(S)), tuple(range(S, L)))
    same_dir = [dlinks[l // S] for l in range(L)]
    op_kind = [sl // S for sl in op_slot]
    # per global op (steps are contiguous runs of global ops): its successors, their slots
    # and numbers of dependencies (an op with one is ready when that one completes)
    succ = [tuple((x, op_slot[b + x], op_ndeps[b + x])
                  for x in succ_idx[succ_ptr[i]:succ_ptr[i + 1]])
            for b, n in zip(step_first, step_nops) for i in range(b, b + n)]
    n_steps = len(step_first)
    roots = [tuple(root_idx[root_ptr[g]:root_ptr[g + 1]]) for g in range(n_steps)]
    step_deps = [op_ndeps[b:b + n] for b, n in zip(step_first, step_nops)]
    step_work = [op_work[b:b + n] for b, n in zip(step_first, step_nops)]
    step_zeros = [[0] * n for n in step_nops]
    # the window's first service or a mid-transfer stall can cut a transmission short
    cuts = tmo == 2 or any(x > win for x in op_work)
    # per worker: first global op of the current step, step number, ops left, jitter factor
    wbase = [0] * W
    wk = [0] * W
    wleft = [0] * W
    wfac = [1.0] * W
    # per op o = w M + j (the kernel's ost and ofl)
    WM = W * M
    odeps = [0] * WM
    oen = [0] * WM
    oturn = [0] * WM
    ostart = [0.0] * WM
    orem = [0.0] * WM
    othr = [-1.0] * WM
    # per scheduler q = w NS + sl: FIFO, running op (-1 none, -2 waiting for the server),
    # start sequence of the running op, work of its chunk
    X = W * NS
    qfifo = [deque() for _ in range(X)]
    qrun = [-1] * X
    qseq = [0] * X
    qch = [0.0] * X
    heap = []                       # (end time, start sequence, worker, slot or -1 - j)
    # per link l: virtual time, when it was brought up to date, rate, heap of
    # (tag, start sequence, worker), changed flag, active workers
    lv = [0.0] * L
    lvt = [0.0] * L
    lvr = [0.0] * L
    lheap = [[] for _ in range(L)]
    lchg = [0] * L
    ln = [0] * L
    lorder = [deque() for _ in range(L)]    # "fcfs": the active workers in arrival order
    lnext = [NONE] * L              # cached next completion (time, sequence, worker, slot)
    lact = [0] * (W * L)            # per flow f = w L + l: active
    lrem = [0.0] * (W * L)          # "fcfs": remaining work
    dirty = [0, 0]                  # per direction: a link changed
    srv_run = [-1] * S              # one update CPU per server: the worker it serves
    srv_wait = [deque() for _ in range(S)]
    seq = 0

    # The starters (the kernel's ``start_op``) take op j of worker w on slot sl, already out
    # of the scheduler's FIFO (its head, or the op itself when the FIFO is empty).

    def start_comp(w, sl, j, now, enabler):
        """A computation starts: its end goes on the heap."""
        nonlocal seq
        q = w * NS + sl
        qrun[q] = j
        seq += 1
        qseq[q] = seq
        o = w * M + j
        if oturn[o] == 0:
            ostart[o] = now
            oen[o] = enabler
        oturn[o] = 1
        orem[o] = now
        heappush(heap, (now + op_work[wbase[w] + j] * wfac[w], seq, w, sl))

    def start_update(w, sl, j, now, enabler):
        """A ``ps`` op with one update CPU per server: it starts, or waits for the CPU."""
        i = sl - 3 * S
        if srv_run[i] >= 0:         # server busy: back at its scheduler's head, w waits
            q = w * NS + sl
            qfifo[q].appendleft(j)
            o = w * M + j
            ostart[o] = now
            oen[o] = enabler
            oturn[o] = 1
            qrun[q] = -2
            srv_wait[i].append(w)
            return
        srv_run[i] = w
        start_comp(w, sl, j, now, enabler)

    def start_link(w, sl, j, now, enabler):
        """A transmission starts on its link."""
        nonlocal seq
        q = w * NS + sl
        qrun[q] = j
        seq += 1
        qseq[q] = seq
        o = w * M + j
        turn = oturn[o]
        if turn == 0:
            ostart[o] = now
            oen[o] = enabler
        l = link_of[sl]
        if fcfs:                    # the head of each link of the direction progresses
            for l2 in same_dir[l]:
                dt = now - lvt[l2]
                if dt > 0.0:
                    order = lorder[l2]
                    if order:
                        lrem[order[0] * L + l2] -= dt * lvr[l2]
                    lvt[l2] = now
        else:                       # the link's virtual time up to now
            dt = now - lvt[l]
            if dt > 0.0:
                lv[l] += dt * lvr[l]
                lvt[l] = now
        c = orem[o]
        if cuts:
            rem = c
            if turn == 0 and rem > win:     # HTTP/2: the first service sends the window
                c = win
            thr = othr[o]
            if thr >= 0.0 and rem - c <= thr:   # a mid-transfer stall: ends at its point
                c = rem - thr
        oturn[o] = turn + 1
        qch[q] = c
        f = w * L + l
        if not lact[f]:             # w joins the link's active list at the back
            if ln[l] == 0:          # an idle link's clock restarts at 0
                lv[l] = 0.0
                lvt[l] = now
            if fcfs:
                lorder[l].append(w)
            ln[l] += 1
            lact[f] = 1
        if fcfs:
            lrem[f] = c
        else:                       # finishes when the link's virtual time reaches its tag
            heappush(lheap[l], (lv[l] + c, seq, w))
        lchg[l] = 1
        dirty[dir_of[l]] = 1

    # the start of each slot's ops
    starter = ([start_link] * S + [start_comp] * S + [start_link] * S
               + [start_update if cpu_fcfs else start_comp] * S)

    def link_next(l):
        """Link l's rate and next completion (time, sequence, worker, slot), or NONE."""
        if fcfs:                    # (as the kernel: from now, at every event of the direction)
            order = lorder[l]
            if order:
                h = order[0]
                lvr[l] = cap
                sl = link_slot[l]
                return (lvt[l] + lrem[h * L + l] / cap, qseq[h * NS + sl], h, sl)
            return NONE
        if lheap[l]:
            r = 1.0
            if sharing == 0:
                r = 1.0 / ln[l]
                if r > cap:
                    r = cap
            lvr[l] = r
            tag, s, h = lheap[l][0]
            return (lvt[l] + (tag - lv[l]) / r, s, h, link_slot[l])
        lvr[l] = 0.0
        return NONE

    def dir_next(d):
        """The earliest next completion of direction d's links (changed ones recomputed)."""
        best = NONE
        for l in dlinks[d]:
            if lchg[l] or fcfs:
                lchg[l] = 0
                lnext[l] = link_next(l)
            if lnext[l] < best:
                best = lnext[l]
        return best

    def start_step(w, now):
        """The worker's next sampled step; its roots are queued in order (``start_step``)."""
        k = wk[w]
        g = samples[w * N + k]
        base = step_first[g]
        wbase[w] = base
        n = step_nops[g]
        wleft[w] = n
        wfac[w] = factors[w * N + k]
        o = w * M
        odeps[o:o + n] = step_deps[g]
        oturn[o:o + n] = step_zeros[g]
        orem[o:o + n] = step_work[g]
        if tmo == 2:                # (else no op ever stalls mid-transfer: othr stays -1)
            othr[o:o + n] = [-1.0] * n
            at = (w * N + k) * M
            for j in range(n):
                u = stall_u[at + j]
                if u >= 0.0:        # stalls once its delivered work reaches u of it
                    othr[o + j] = op_work[base + j] * (1.0 - u)
        # (every scheduler of w is empty here: every op of the last step has finished)
        step_start[w * N + k] = now
        for j in roots[g]:
            sl = op_slot[base + j]
            q = w * NS + sl
            if qrun[q] != -1:
                qfifo[q].append(j)
            elif qfifo[q]:
                qfifo[q].append(j)
                starter[sl](w, sl, qfifo[q].popleft(), now, -1)
            else:
                starter[sl](w, sl, j, now, -1)

    for w in range(W):
        start_step(w, 0.0)
    events = 0
    nrec = 0
    ndone = 0
    nxt0 = nxt1 = NONE              # per direction: the earliest next completion
    one = S == 1                    # (then a direction is one link, link d)
    while True:
        if dirty[0]:
            dirty[0] = 0
            nxt0 = link_next(0) if one else dir_next(0)
        if dirty[1]:
            dirty[1] = 0
            nxt1 = link_next(1) if one else dir_next(1)
        # the next event: a computation (heap top) or a transmission (per direction);
        # (time, sequence) pairs are unique, so tuples compare as the kernel's tests
        ev = heap[0] if heap else NONE
        if nxt0 < ev:
            ev = nxt0
        if nxt1 < ev:
            ev = nxt1
        if ev is NONE:
            break
        now, _, w, sl = ev
        events += 1
        base = wbase[w]
        finished = True
        if sl < 0:                  # the end of a timeout stall (rto after it began)
            heappop(heap)
            j = -1 - sl
            q = -1
            if tmo == 2:            # back from a mid-transfer stall: rejoin the link
                sl = op_slot[base + j]
                q = w * NS + sl
                if qrun[q] == -1 and not qfifo[q]:
                    start_link(w, sl, j, now, j)
                else:
                    qfifo[q].append(j)
                    if qrun[q] == -1:
                        start_link(w, sl, qfifo[q].popleft(), now, j)
                continue
        else:
            q = w * NS + sl
            j = qrun[q]
            qrun[q] = -1
            l = link_of[sl]
            if l >= 0:
                if fcfs:
                    for l2 in same_dir[l]:
                        dt = now - lvt[l2]
                        if dt > 0.0:
                            order = lorder[l2]
                            if order:
                                lrem[order[0] * L + l2] -= dt * lvr[l2]
                            lvt[l2] = now
                    lrem[w * L + l] = 0.0
                else:               # the top's tag is the link's virtual time now
                    lv[l] = heappop(lheap[l])[0]
                    lvt[l] = now
                lchg[l] = 1
                dirty[dir_of[l]] = 1
                if cuts or tmo == 1:
                    o = w * M + j
                    thr = othr[o]
                    if thr >= 0.0 and qch[q] == orem[o] - thr:
                        # the stall point of a mid-transfer stall: rejoin rto later
                        orem[o] = thr
                        othr[o] = -1.0
                        heappush(heap, (now + rto, qseq[q], w, -1 - j))
                        finished = False
                    elif qch[q] < orem[o]:  # first HTTP/2 chunk: back to the queue's end
                        orem[o] -= qch[q]
                        qfifo[q].append(j)
                        finished = False
                    elif tmo == 1 and stalls[(w * N + wk[w]) * M + j] != 0:
                        # bytes delivered, completion rto later
                        heappush(heap, (now + rto, qseq[q], w, -1 - j))
                        finished = False
            else:
                heappop(heap)
                if cpu_fcfs and sl >= 3 * S:    # the update CPU passes to its FIFO's head
                    i = sl - 3 * S
                    srv_run[i] = -1
                    if srv_wait[i]:
                        w2 = srv_wait[i].popleft()
                        start_comp(w2, sl, qfifo[w2 * NS + sl].popleft(), now, -1)
                        srv_run[i] = w2
        if finished:
            wleft[w] -= 1
            if record:
                rec_i[3 * nrec] = w
                rec_i[3 * nrec + 1] = wk[w]
                rec_i[3 * nrec + 2] = base + j
                kind = op_kind[base + j]
                if kind == 1 or kind == 3:  # computations: the actual start, after any wait
                    rec_t[2 * nrec] = orem[w * M + j]
                else:
                    rec_t[2 * nrec] = ostart[w * M + j]
                rec_t[2 * nrec + 1] = now
                nrec += 1
            for x, s2, nd in succ[base + j]:
                if nd > 1:
                    o = w * M + x
                    odeps[o] -= 1
                    if odeps[o]:
                        continue
                # ready: queue it; start it if w is not using the slot
                q2 = w * NS + s2
                if qrun[q2] != -1:
                    qfifo[q2].append(x)
                elif qfifo[q2]:     # (w's op on the slot has just finished: its queue first)
                    qfifo[q2].append(x)
                    starter[s2](w, s2, qfifo[q2].popleft(), now, j)
                else:
                    starter[s2](w, s2, x, now, j)
        if q >= 0 and qrun[q] == -1:    # (-2: next ps op waits for the server)
            if qfifo[q]:            # more ops of w on this resource
                starter[sl](w, sl, qfifo[q].popleft(), now, j)
            elif l >= 0:            # w leaves the link's active list
                lact[w * L + l] = 0
                ln[l] -= 1
                if fcfs:            # only the head progresses, so only the head finishes
                    order = lorder[l]
                    if order[0] == w:
                        order.popleft()
                    else:
                        order.remove(w)
        if wleft[w] == 0:           # every op of the step has finished
            k = wk[w]
            step_end[w * N + k] = now
            # critical path: back from the last op, through the op whose completion
            # started each op, to the step start
            x = j
            tcur = now
            at = (w * N + k) * 4
            while x >= 0:
                o = w * M + x
                t0 = ostart[o]
                crit[at + op_kind[base + x]] += tcur - t0
                tcur = t0
                x = oen[o]
            wk[w] = k + 1
            if sync == 0:
                if k + 1 < N:
                    start_step(w, now)
            else:
                ndone += 1
                if ndone == W:      # barrier
                    ndone = 0
                    if k + 1 < N:
                        for w2 in range(W):
                            start_step(w2, now)
    stuck = 0
    for w in range(W):
        if wk[w] != N:
            stuck = 1
    return events, nrec, stuck
