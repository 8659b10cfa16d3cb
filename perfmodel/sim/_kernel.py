"""The event loop of the simulator: Li et al. 2022, Algorithm 1 (with the two documented
fixes) and Li et al. 2020, Algorithm 3.1, over flat buffers.

This module is written in the subset of Python that numba compiles: scalars
and flat 1-D buffers indexed by integers; no objects, no closures, no
allocation.  The same source runs two ways (see :mod:`perfmodel.sim.engine`):
compiled by numba on numpy arrays (:mod:`perfmodel.sim._kernel_jit`), or in
CPython on Python lists (list indexing is several times faster than numpy
scalar indexing in the interpreter).  The CPython engine runs it for the
scan path only; the heap path has a version written for the interpreter,
:mod:`perfmodel.sim._pyloop`, which the tests hold equal to this source bit
for bit.  State is packed into a few buffers so that a call passes few
arrays (numba counts references of every array argument, which costs more
than the work of a small helper).

Sizes: ``W`` workers, ``S`` servers, ``NS = 4 S`` slots, ``L = 2 S`` links,
``M`` the most ops in a step, ``N`` steps per worker, ``WM = W M``,
``X = W NS`` queues.  Indices:

* slot ``sl = kind * S + server``, kind 0 downlink, 1 worker, 2 uplink, 3 ps
  (worker ops use server 0); queue ``q = w * NS + sl`` (Li et al. 2022's
  ``scheduler[w, r]``);
* link ``l = d * S + server``, d = 0 for downlinks and 1 for uplinks; flow
  ``f = w * L + l`` (worker w's use of link l);
* an op of worker w's current step: local index ``j``, ``o = w * M + j``;
  global op ``step_first[g] + j`` for profiled step g.

Buffers (offsets in brackets):

* ``dims`` (int): S, W, L, M, NS, Q (queue capacity 2 M), N, path (1: the scan
  path, below), sharing (0 "ps", 1 "fcfs", 2 all-reduce);
* ``wst`` (int, 4 W): current profiled step g [0], its first global op [W],
  step number k [2 W], ops left [3 W];
* ``ost`` (int, 3 WM): unmet dependencies [0], enabler [WM] (local index of
  the op whose completion started this one, -1 at the step start), services
  received [2 WM];
* ``ofl`` (float, 3 WM): start time [0], remaining transmission work [WM],
  remaining work at which a pending mid-transfer stall happens, or -1 [2 WM]
  (``tmo`` 2, below);
* ``qst`` (int, 4 X): queue head [0], tail [X], running op or -1 [2 X],
  sequence number of the running op's start [3 X]; ``qch`` (float, X): work
  of the running chunk; ``qbuf`` (int, X Q): the FIFO contents;
* heap of running computations and timeout stalls: ``ht`` (float) end
  times, ``hi`` (int, 3 per entry) start sequence, worker, slot -- or, for a
  stalled transmission (below), ``-1 - j`` with ``j`` its local op index;
  room for X + WM entries;
* ``lin`` (int, ``7 L + 5 W L + 2``): per link its active list in arrival
  order, a doubly linked list of workers: head [0, L), tail [L, 2L), length
  [2 L, 3 L); per flow the next worker [3 L + f] and the previous one
  [3 L + W L + f] (-1 at the ends), the flow's active flag [3 L + 2 W L + f];
  the directions' changed flags [3 L + 3 W L + d]; from ``h = 3 L + 3 W L + 2``
  per link its changed flag [h + l], heap size [h + L + l], and the cached
  next completion's start sequence [h + 2 L + l] and worker (-1: none)
  [h + 3 L + l]; then per link a heap of W (start sequence, worker) pairs
  [h + 4 L + 2 (l W + i)];
* ``lfl`` (float, ``3 W L + 2 + 4 L``): per flow its work [f] (the scan path
  and "fcfs": remaining work; the heap path: unused) and rate [W L + f] (scan
  path); the time each direction was last brought up to date [2 W L + d]
  (scan path); from ``v = 2 W L + 2`` per link its virtual time [v + l], the
  time it was last brought up to date [v + L + l], the rate of every flow that
  progresses on it [v + 2 L + l], its cached next completion time
  [v + 3 L + l], and its heap's virtual finish tags [v + 4 L + l W + i];
* ``nxt_t`` (float, 2) / ``nxt_i`` (int, 3 x 2): per direction, the next
  completion time and its (sequence, worker, link);
* ``cnt`` (int): sequence numbers used, heap size, events, records, error;
* ``srv`` (int, 1 + 3 S + S W): the server update CPUs of ``server_cpu="fcfs"``:
  the flag [0] (0 ``"own"``: every worker has its own update CPU, Share = 1;
  1 ``"fcfs"``: one per server), per server i the FIFO's head [1 + i], its
  length [1 + S + i], the worker whose ``ps`` op runs or -1 [1 + 2 S + i], and
  the FIFO of waiting workers, a ring of W entries [1 + 3 S + i W].
  A worker's ``ps`` op that finds its server busy waits there (its own queue's
  running entry is then -2, "waiting for the server"); it joins with its
  ready time and enabler set (the critical path charges the wait to ``ps``)
  and starts when it reaches the head.  A computation's actual start is kept
  in ``ofl[WM + o]`` (unused by computations otherwise) for the record.
* ``stalls`` (int, N W M when ``tmo`` is 1, else unused): 1 if op ``j`` of
  worker w's step k stalls for a retransmission timeout, at ``(w N + k) M + j``;
* ``stall_u`` (float, N W M when ``tmo`` is 2, else unused): at the same
  index, the fraction u in [0, 1) of the op's transmission work delivered
  before it stalls, or -1 if it does not stall.

Timeouts, ``tmo`` 1 (``timeout_position="tail"``): when the last bytes of
a stalling transmission op are delivered, the link side is handled exactly
as for a completion (the worker leaves the link's active set or starts its
next queued op there, so the others' shares go up at that instant), but
instead of completing, the op is pushed on the heap with end time
``now + rto``, the start sequence of its transmission and slot ``-1 - j``.
When that entry is popped the op completes (ops left, record, dependents)
without any link or queue bookkeeping; its step cannot have ended
meanwhile, since the op had not completed.

Timeouts, ``tmo`` 2 (``"uniform"``): the stall happens when the op's
remaining work reaches ``thr = work (1 - u)`` (``ofl[2 WM + o]``, set at the
step start).  ``start_op`` cuts the service that would cross ``thr`` so that
it ends there (whatever the window's chunking; the cut service is the one
with ``qch == rem - thr``, the same float expression at both ends).  At its
end the link side is handled as for a completion, the op's remaining work
becomes ``thr``, its stall is marked done (-1) and it is pushed on the heap as
above.  When that entry is popped the op rejoins the end of its worker's
queue for the link (started at once if the worker sends nothing there, so it
joins the link's active set at the back, as a newly started flow), and
completes when the rest is delivered.  The rejoin is a new turn, so the
window never splits the rest (the stall took the place of the window's
second turn); the queue then holds an op at most three times per step
(``Q = 3 M``).

Transmission work is in seconds at the full bandwidth; rates are fractions
of it.  Each link (a server's downlink or uplink) keeps its active workers in
arrival order.  Link events cost O(log W) (the heap path), except under the
max-min NIC rule:

* ``"ps"`` (each of the n active flows gets ``min(cap, 1/n)``) and all-reduce
  (rate 1 each): the standard processor-sharing queue on a virtual clock.  The
  link's virtual time V goes up at the rate every active flow gets; a flow
  that starts with work c at virtual time V finishes when V reaches its tag
  ``V + c``, so the heap of (tag, start sequence) gives the next completion,
  ``t + (tag - V) / rate``, and a start or a completion costs O(log W)
  without touching the other flows.  At a completion V is set to the tag; an
  idle link's V restarts at 0.  The rounding differs from updating every
  flow's remaining work (the scan path): results agree to about 1e-9
  relative, and the order of events that tie in exact arithmetic is decided
  by the rounding on either path.
* ``"fcfs"``: only the head of the active list progresses; its remaining
  work is updated as the scan path does (the same arithmetic, the same
  results bit for bit), O(1) per event.
* ``nic`` with several servers (max-min fair rates under the server links
  and the workers' NICs: by progressive filling under ``"ps"``; under
  ``"fcfs"`` place by place in the links' arrival orders, each worker taking
  what the earlier places left of its link and NIC) stays on the scan path:
  every event of a direction brings all its active flows up to date
  (``advance``), and when the direction changed its rates are recomputed
  (``set_rates``) and its flows scanned for the next completion
  (``next_link``): O(flows of the direction) per event.

The heap path also does O(S) work per event (the links of a direction are
compared for the earliest completion).  Ties between events at the same
instant go to the op started first (the stable sort of the pseudo-code's
queue Q).
"""

INF = 1e300


def heap_push(ht, hi, n, t, s, w, sl):
    """Push (t, s) -> (w, sl) on the heap of size n; return the new size."""
    i = n
    while i > 0:
        p = (i - 1) >> 1
        tp = ht[p]
        if tp < t or (tp == t and hi[3 * p] < s):
            break
        ht[i] = tp
        hi[3 * i] = hi[3 * p]
        hi[3 * i + 1] = hi[3 * p + 1]
        hi[3 * i + 2] = hi[3 * p + 2]
        i = p
    ht[i] = t
    hi[3 * i] = s
    hi[3 * i + 1] = w
    hi[3 * i + 2] = sl
    return n + 1


def heap_pop(ht, hi, n):
    """Remove the top of the heap of size n; return the new size."""
    n -= 1
    if n == 0:
        return 0
    t = ht[n]
    s = hi[3 * n]
    i = 0
    a = 1
    while a < n:                    # the hole sinks along the smaller children ...
        b = a + 1
        if b < n and (ht[b] < ht[a] or (ht[b] == ht[a] and hi[3 * b] < hi[3 * a])):
            a = b
        ht[i] = ht[a]
        hi[3 * i] = hi[3 * a]
        hi[3 * i + 1] = hi[3 * a + 1]
        hi[3 * i + 2] = hi[3 * a + 2]
        i = a
        a = 2 * i + 1
    while i > 0:                    # ... and the last entry climbs back from the leaf
        p = (i - 1) >> 1
        if ht[p] < t or (ht[p] == t and hi[3 * p] < s):
            break
        ht[i] = ht[p]
        hi[3 * i] = hi[3 * p]
        hi[3 * i + 1] = hi[3 * p + 1]
        hi[3 * i + 2] = hi[3 * p + 2]
        i = p
    ht[i] = t
    hi[3 * i] = s
    hi[3 * i + 1] = hi[3 * n + 1]
    hi[3 * i + 2] = hi[3 * n + 2]
    return n


def advance(d, now, dims, lin, lfl):
    """Scan path: bring every active flow of direction d up to ``now`` at its current rate."""
    S = dims[0]
    W = dims[1]
    L = dims[2]
    WL = W * L
    t_at = 2 * WL + d
    dt = now - lfl[t_at]
    if dt > 0.0:
        for i in range(S):
            l = d * S + i
            w = lin[l]
            while w >= 0:
                f = w * L + l
                lfl[f] -= dt * lfl[WL + f]
                w = lin[3 * L + f]
        lfl[t_at] = now


def set_rates(d, dims, sharing, cap, nic, lin, lfl, tmp_rem, tmp_cnt, frozen):
    """Scan path: bandwidth fractions of the active flows of direction d.

    sharing 0 "ps": each of the n workers active on a server link gets 1/n
    (line 5 of Li et al. 2022's Share), at most ``cap``; 1 "fcfs": the first active
    worker gets ``cap``, the others nothing (line 2); 2 all-reduce: 1 (line 8).
    With ``nic`` (several servers), rates are max-min fair under both the
    server links and each worker's own NIC (capacity 1 per direction): "ps"
    by progressive filling (the two-server rule of Li et al. 2020, Sec. 5 is
    the case it was stated for); "fcfs" serves each server link's workers in
    their arrival order, each taking what the workers before it left of the
    link and what its own NIC has left (max-min fair among the flows at the
    same place of their links' orders), so no NIC carries more than its line
    rate and no link idles while a worker behind could use it.
    """
    S = dims[0]
    W = dims[1]
    L = dims[2]
    WL = W * L
    NX = 3 * L
    if nic != 0 and sharing == 1 and S > 1:
        # place by place in the links' arrival orders, the place's flows (one per link)
        # fill what the earlier places left of their link and NIC, max-min fair.  The
        # filling repeats the "ps" one below on purpose: it walks one cursor per link, where
        # sharing it would walk every flow of the direction at every place (O(S W^2))
        for r in range(S + W):
            tmp_rem[r] = 1.0
        for i in range(S):
            l = d * S + i
            w = lin[l]
            tmp_cnt[i] = w              # the link's flow at the current place (cursor)
            while w >= 0:
                lfl[WL + w * L + l] = 0.0
                w = lin[NX + w * L + l]
        while True:
            for w in range(W):
                tmp_cnt[S + w] = 0
            n_open = 0
            for i in range(S):
                w = tmp_cnt[i]
                if w >= 0:
                    frozen[w * L + d * S + i] = 0
                    tmp_cnt[S + w] += 1
                    n_open += 1
            if n_open == 0:
                break
            level = 0.0
            while n_open > 0:
                inc = cap - level
                for i in range(S):
                    w = tmp_cnt[i]
                    if w >= 0 and frozen[w * L + d * S + i] == 0:
                        if tmp_rem[i] < inc:
                            inc = tmp_rem[i]
                        share = tmp_rem[S + w] / tmp_cnt[S + w]
                        if share < inc:
                            inc = share
                if inc < 0.0:
                    inc = 0.0
                level += inc
                for i in range(S):
                    w = tmp_cnt[i]
                    if w >= 0 and frozen[w * L + d * S + i] == 0:
                        lfl[WL + w * L + d * S + i] += inc
                        tmp_rem[i] -= inc
                        tmp_rem[S + w] -= inc
                for i in range(S):
                    w = tmp_cnt[i]
                    f = w * L + d * S + i       # (unused when the link's orders ran out, w < 0)
                    if w >= 0 and frozen[f] == 0 and (
                            level >= cap * (1.0 - 1e-12) or tmp_rem[i] <= 1e-12
                            or tmp_rem[S + w] <= 1e-12):
                        frozen[f] = 1
                        tmp_cnt[S + w] -= 1
                        n_open -= 1
            for i in range(S):          # the next place in each link's order
                w = tmp_cnt[i]
                if w >= 0:
                    tmp_cnt[i] = lin[NX + w * L + d * S + i]
        return
    if nic != 0 and sharing == 0 and S > 1:
        # progressive filling: resources 0..S-1 are server links, S..S+W-1 NICs
        for r in range(S + W):
            tmp_rem[r] = 1.0
            tmp_cnt[r] = 0
        n_open = 0
        for i in range(S):
            l = d * S + i
            w = lin[l]
            while w >= 0:
                f = w * L + l
                lfl[WL + f] = 0.0
                frozen[f] = 0
                tmp_cnt[i] += 1
                tmp_cnt[S + w] += 1
                n_open += 1
                w = lin[NX + f]
        level = 0.0
        while n_open > 0:
            inc = cap - level
            for r in range(S + W):
                if tmp_cnt[r] > 0:
                    share = tmp_rem[r] / tmp_cnt[r]
                    if share < inc:
                        inc = share
            if inc < 0.0:
                inc = 0.0
            level += inc
            for r in range(S + W):
                if tmp_cnt[r] > 0:
                    tmp_rem[r] -= inc * tmp_cnt[r]
            for i in range(S):          # raise the open flows; mark those now blocked
                l = d * S + i
                w = lin[l]
                while w >= 0:
                    f = w * L + l
                    if frozen[f] == 0:
                        lfl[WL + f] += inc
                        if level >= cap * (1.0 - 1e-12) or tmp_rem[i] <= 1e-12 \
                                or tmp_rem[S + w] <= 1e-12:
                            frozen[f] = 2
                    w = lin[NX + f]
            for i in range(S):          # then take them out of the counts
                l = d * S + i
                w = lin[l]
                while w >= 0:
                    f = w * L + l
                    if frozen[f] == 2:
                        frozen[f] = 1
                        tmp_cnt[i] -= 1
                        tmp_cnt[S + w] -= 1
                        n_open -= 1
                    w = lin[NX + f]
        return
    for i in range(S):
        l = d * S + i
        n = lin[2 * L + l]
        w = lin[l]
        p = 0
        while w >= 0:
            f = w * L + l
            if sharing == 0:
                r = 1.0 / n
                if r > cap:
                    r = cap
            elif sharing == 1:
                r = cap if p == 0 else 0.0
            else:
                r = 1.0
            lfl[WL + f] = r
            p += 1
            w = lin[NX + f]


def next_link(d, dims, lin, lfl, qst, nxt_t, nxt_i):
    """Scan path: earliest (time, start sequence) completion among the flows of direction d."""
    S = dims[0]
    W = dims[1]
    L = dims[2]
    NS = dims[4]
    X = W * NS
    WL = W * L
    bt = INF
    bs = -1
    bw = -1
    bl = -1
    kind = 0 if d == 0 else 2
    t_at = lfl[2 * WL + d]
    for i in range(S):
        l = d * S + i
        w = lin[l]
        while w >= 0:
            f = w * L + l
            r = lfl[WL + f]
            if r > 0.0:
                t = t_at + lfl[f] / r
                s = qst[3 * X + w * NS + kind * S + i]
                if t < bt or (t == bt and s < bs):
                    bt = t
                    bs = s
                    bw = w
                    bl = l
            w = lin[3 * L + f]
    nxt_t[d] = bt
    nxt_i[3 * d] = bs
    nxt_i[3 * d + 1] = bw
    nxt_i[3 * d + 2] = bl


def link_push(l, t, s, w, dims, lin, lfl):
    """Heap path: push (virtual finish tag t, start sequence s) -> worker w on link l's heap."""
    W = dims[1]
    hk = dims[25] + l * W           # tags in lfl
    hi = dims[20] + 2 * l * W       # (sequence, worker) pairs in lin
    i = lin[dims[17] + l]
    lin[dims[17] + l] = i + 1
    while i > 0:
        p = (i - 1) >> 1
        tp = lfl[hk + p]
        if tp < t or (tp == t and lin[hi + 2 * p] < s):
            break
        lfl[hk + i] = tp
        lin[hi + 2 * i] = lin[hi + 2 * p]
        lin[hi + 2 * i + 1] = lin[hi + 2 * p + 1]
        i = p
    lfl[hk + i] = t
    lin[hi + 2 * i] = s
    lin[hi + 2 * i + 1] = w


def link_pop(l, dims, lin, lfl):
    """Heap path: remove the top of link l's heap."""
    W = dims[1]
    hk = dims[25] + l * W
    hi = dims[20] + 2 * l * W
    n = lin[dims[17] + l] - 1
    lin[dims[17] + l] = n
    if n == 0:
        return
    t = lfl[hk + n]
    s = lin[hi + 2 * n]
    i = 0
    a = 1
    while a < n:                    # as heap_pop
        b = a + 1
        if b < n and (lfl[hk + b] < lfl[hk + a]
                      or (lfl[hk + b] == lfl[hk + a] and lin[hi + 2 * b] < lin[hi + 2 * a])):
            a = b
        lfl[hk + i] = lfl[hk + a]
        lin[hi + 2 * i] = lin[hi + 2 * a]
        lin[hi + 2 * i + 1] = lin[hi + 2 * a + 1]
        i = a
        a = 2 * i + 1
    while i > 0:
        p = (i - 1) >> 1
        if lfl[hk + p] < t or (lfl[hk + p] == t and lin[hi + 2 * p] < s):
            break
        lfl[hk + i] = lfl[hk + p]
        lin[hi + 2 * i] = lin[hi + 2 * p]
        lin[hi + 2 * i + 1] = lin[hi + 2 * p + 1]
        i = p
    lfl[hk + i] = t
    lin[hi + 2 * i] = s
    lin[hi + 2 * i + 1] = lin[hi + 2 * n + 1]


def link_advance(d, now, dims, lin, lfl):
    """Heap path: bring the links of direction d up to ``now``.

    "fcfs": the head's remaining work goes down at its rate (the others get
    nothing), as the scan path does; else the link's virtual time goes up at
    the rate every active flow gets.
    """
    S = dims[0]
    L = dims[2]
    VV = dims[21]
    VT = dims[22]
    VR = dims[23]
    for l in range(d * S, d * S + S):
        dt = now - lfl[VT + l]
        if dt > 0.0:
            if dims[8] == 1:
                h = lin[l]
                if h >= 0:
                    lfl[h * L + l] -= dt * lfl[VR + l]
            else:
                lfl[VV + l] += dt * lfl[VR + l]
            lfl[VT + l] = now


def link_next(d, dims, cap, lin, lfl, qst, nxt_t, nxt_i):
    """Heap path: rates and next completion of direction d's changed links, then the earliest.

    Every flow that progresses on a link has the same rate: ``min(cap, 1/n)``
    with n active workers ("ps", the heap top finishes first), 1 (all-reduce,
    likewise), ``cap`` for the head of the active list only ("fcfs").
    """
    S = dims[0]
    L = dims[2]
    sharing = dims[8]
    LD = dims[16]
    NQ = dims[18]
    NW = dims[19]
    VR = dims[23]
    NT = dims[24]
    bt = INF
    bs = -1
    bw = -1
    bl = -1
    for l in range(d * S, d * S + S):
        if lin[LD + l] != 0 or sharing == 1:    # (fcfs: as the scan path, from now)
            lin[LD + l] = 0
            h = lin[l]
            if sharing == 1:
                if h >= 0:
                    lfl[VR + l] = cap
                    lfl[NT + l] = lfl[dims[22] + l] + lfl[h * L + l] / cap
                    lin[NQ + l] = qst[dims[9] * 3 + h * dims[4] + (0 if d == 0 else 2) * S
                                      + l - d * S]
                    lin[NW + l] = h
                else:
                    lin[NW + l] = -1
            elif lin[dims[17] + l] > 0:
                r = 1.0
                if sharing == 0:
                    r = 1.0 / lin[2 * L + l]
                    if r > cap:
                        r = cap
                lfl[VR + l] = r
                hi = dims[20] + 2 * l * dims[1]
                lfl[NT + l] = lfl[dims[22] + l] + (lfl[dims[25] + l * dims[1]]
                                                   - lfl[dims[21] + l]) / r
                lin[NQ + l] = lin[hi]
                lin[NW + l] = lin[hi + 1]
            else:
                lfl[VR + l] = 0.0
                lin[NW + l] = -1
        w = lin[NW + l]
        if w >= 0:
            t = lfl[NT + l]
            s = lin[NQ + l]
            if t < bt or (t == bt and s < bs):
                bt = t
                bs = s
                bw = w
                bl = l
    nxt_t[d] = bt
    nxt_i[3 * d] = bs
    nxt_i[3 * d + 1] = bw
    nxt_i[3 * d + 2] = bl


def link_leave(w, l, dims, lin):
    """Take worker w out of link l's active list (Algorithm 1 line 30)."""
    L = dims[2]
    NX = dims[12]
    PV = dims[13]
    f = w * L + l
    p = lin[PV + f]
    n = lin[NX + f]
    if p >= 0:
        lin[NX + p * L + l] = n
    else:
        lin[l] = n
    if n >= 0:
        lin[PV + n * L + l] = p
    else:
        lin[L + l] = p
    lin[dims[14] + f] = 0
    lin[2 * L + l] -= 1


def start_op(w, sl, now, enabler, win, dims, cnt, wst, ost, ofl, qst, qch, qbuf, op_work,
             factors, ht, hi, lin, lfl, srv):
    """Start the head of scheduler[w, sl] (Li et al. 2022, Algorithm 1 lines 26 and 28).

    With one update CPU per server (``srv[0]``) a ``ps`` op that finds the
    server busy joins the server's FIFO instead (see the module notes).
    """
    S = dims[0]
    W = dims[1]
    M = dims[3]
    NS = dims[4]
    Q = dims[5]
    X = dims[9]
    WM = dims[10]
    q = w * NS + sl
    kind = sl // S
    if kind == 3 and srv[0] != 0:
        i = sl % S
        if srv[1 + 2 * S + i] >= 0:     # server busy: wait at the end of its FIFO
            o = w * M + qbuf[q * Q + qst[q]]
            ofl[o] = now
            ost[WM + o] = enabler
            ost[2 * WM + o] = 1
            qst[2 * X + q] = -2
            srv[1 + 3 * S + i * W + (srv[1 + i] + srv[1 + S + i]) % W] = w
            srv[1 + S + i] += 1
            return
        srv[1 + 2 * S + i] = w
    j = qbuf[q * Q + qst[q]]
    qst[q] += 1
    qst[2 * X + q] = j
    cnt[0] += 1
    qst[3 * X + q] = cnt[0]
    o = w * M + j
    turn = ost[2 * WM + o]
    if turn == 0:
        ofl[o] = now
        ost[WM + o] = enabler
    if kind == 1 or kind == 3:
        ost[2 * WM + o] = 1
        ofl[WM + o] = now
        dur = op_work[wst[W + w] + j] * factors[w * dims[6] + wst[2 * W + w]]
        cnt[1] = heap_push(ht, hi, cnt[1], now + dur, cnt[0], w, sl)
        return
    L = dims[2]
    d = 0 if kind == 0 else 1
    l = d * S + sl % S
    scan = dims[7]
    if scan != 0:
        advance(d, now, dims, lin, lfl)
    elif dims[8] == 1:
        link_advance(d, now, dims, lin, lfl)
    else:                           # the link's virtual time up to now
        dt = now - lfl[dims[22] + l]
        if dt > 0.0:
            lfl[dims[21] + l] += dt * lfl[dims[23] + l]
            lfl[dims[22] + l] = now
    rem = ofl[WM + o]
    c = rem
    if turn == 0 and rem > win:     # HTTP/2: the first service sends WIN (Li et al. 2020)
        c = win
    thr = ofl[2 * WM + o]
    if thr >= 0.0 and rem - c <= thr:   # a mid-transfer stall: this service ends at its point
        c = rem - thr
    ost[2 * WM + o] = turn + 1
    qch[q] = c
    f = w * L + l
    if lin[dims[14] + f] == 0:      # w joins active[r] at the back (Algorithm 1 line 25)
        if lin[2 * L + l] == 0:     # an idle link's clock restarts at 0
            lfl[dims[21] + l] = 0.0
            lfl[dims[22] + l] = now
        tail = lin[L + l]
        lin[dims[12] + f] = -1
        lin[dims[13] + f] = tail
        if tail >= 0:
            lin[dims[12] + tail * L + l] = w
        else:
            lin[l] = w
        lin[L + l] = w
        lin[2 * L + l] += 1
        lin[dims[14] + f] = 1
    if scan != 0 or dims[8] == 1:
        lfl[f] = c
    else:                           # finishes when the link's virtual time reaches its tag
        link_push(l, lfl[dims[21] + l] + c, cnt[0], w, dims, lin, lfl)
    lin[dims[16] + l] = 1
    lin[dims[15] + d] = 1


def start_step(w, now, win, dims, cnt, wst, ost, ofl, qst, qch, qbuf, op_work, factors, ht, hi,
               lin, lfl, samples, step_first, step_nops, root_ptr, root_idx, op_ndeps, op_slot,
               step_start, srv, stall_u, tmo):
    """STARTRANDOMSTEP: the worker's next sampled step; its roots are queued in order."""
    W = dims[1]
    M = dims[3]
    NS = dims[4]
    Q = dims[5]
    N = dims[6]
    WM = W * M
    X = W * NS
    k = wst[2 * W + w]
    g = samples[w * N + k]
    wst[w] = g
    base = step_first[g]
    wst[W + w] = base
    n = step_nops[g]
    wst[3 * W + w] = n
    for j in range(n):
        o = w * M + j
        ost[o] = op_ndeps[base + j]
        ost[2 * WM + o] = 0
        ofl[WM + o] = op_work[base + j]
        ofl[2 * WM + o] = -1.0
        if tmo == 2:
            u = stall_u[(w * N + k) * M + j]
            if u >= 0.0:                # stalls once its delivered work reaches u of it
                ofl[2 * WM + o] = op_work[base + j] * (1.0 - u)
    for sl in range(NS):
        qst[w * NS + sl] = 0
        qst[X + w * NS + sl] = 0
    step_start[w * N + k] = now
    for r in range(root_ptr[g], root_ptr[g + 1]):
        j = root_idx[r]
        sl = op_slot[base + j]
        q = w * NS + sl
        qbuf[q * Q + qst[X + q]] = j
        qst[X + q] += 1
        if qst[2 * X + q] == -1:
            start_op(w, sl, now, -1, win, dims, cnt, wst, ost, ofl, qst, qch, qbuf, op_work,
                     factors, ht, hi, lin, lfl, srv)


def run(op_slot, op_work, op_ndeps, succ_ptr, succ_idx, step_first, step_nops, root_ptr,
        root_idx, samples, factors, dims, sync, sharing, cap, nic, win, record, step_start,
        step_end, crit, rec_i, rec_t, wst, ost, ofl, qst, qch, qbuf, ht, hi, lin, lfl, nxt_t,
        nxt_i, tmp_rem, tmp_cnt, frozen, cnt, srv, stalls, stall_u, tmo, rto):
    """Simulate N steps of W workers; fill step_start, step_end, crit (and the record).

    ``rec_i`` gets (worker, step number, global op) and ``rec_t`` (start, end)
    per finished op when ``record`` is set; ``cnt[4]`` is set if a worker
    could not finish its steps.
    """
    S = dims[0]
    W = dims[1]
    L = dims[2]
    M = dims[3]
    NS = dims[4]
    Q = dims[5]
    N = dims[6]
    WM = W * M
    X = W * NS
    scan = dims[7]
    VV = dims[21]                       # the links' virtual times in lfl
    DD = dims[15]                       # the directions' changed flags in lin
    for w in range(W):
        start_step(w, 0.0, win, dims, cnt, wst, ost, ofl, qst, qch, qbuf, op_work, factors, ht,
                   hi, lin, lfl, samples, step_first, step_nops, root_ptr, root_idx, op_ndeps,
                   op_slot, step_start, srv, stall_u, tmo)
    ndone = 0
    while True:
        if lin[DD] != 0 or lin[DD + 1] != 0:
            for d in range(2):
                if lin[DD + d] != 0:
                    if scan != 0:
                        set_rates(d, dims, sharing, cap, nic, lin, lfl, tmp_rem, tmp_cnt,
                                  frozen)
                        next_link(d, dims, lin, lfl, qst, nxt_t, nxt_i)
                    else:
                        link_next(d, dims, cap, lin, lfl, qst, nxt_t, nxt_i)
                    lin[DD + d] = 0
        # the next event: a computation (heap top) or a transmission (per direction)
        src = -1
        bt = INF
        bs = -1
        if cnt[1] > 0:
            bt = ht[0]
            bs = hi[0]
            src = 2
        if nxt_i[1] >= 0 and (nxt_t[0] < bt or (nxt_t[0] == bt and nxt_i[0] < bs)):
            bt = nxt_t[0]
            bs = nxt_i[0]
            src = 0
        if nxt_i[4] >= 0 and (nxt_t[1] < bt or (nxt_t[1] == bt and nxt_i[3] < bs)):
            bt = nxt_t[1]
            bs = nxt_i[3]
            src = 1
        if src < 0:
            break
        now = bt
        cnt[2] += 1
        is_link = src < 2
        late = False                        # the end of a timeout stall
        d = 0
        l = 0
        if is_link:
            d = src
            w = nxt_i[3 * d + 1]
            l = nxt_i[3 * d + 2]
            if scan != 0:
                advance(d, now, dims, lin, lfl)
                lfl[w * L + l] = 0.0
            elif sharing == 1:
                link_advance(d, now, dims, lin, lfl)
                lfl[w * L + l] = 0.0
                lin[DD + 2 + l] = 1
            else:                           # the top's tag is the link's virtual time now
                lfl[VV + l] = lfl[dims[25] + l * W]
                lfl[dims[22] + l] = now
                link_pop(l, dims, lin, lfl)
                lin[DD + 2 + l] = 1
            sl = (0 if d == 0 else 2) * S + l - d * S
            lin[DD + d] = 1
        else:
            w = hi[1]
            sl = hi[2]
            cnt[1] = heap_pop(ht, hi, cnt[1])
            late = sl < 0
        if late:                            # the op's stall began rto ago (module notes)
            j = -1 - sl
            sl = op_slot[wst[W + w] + j]
            q = w * NS + sl
        else:
            q = w * NS + sl
            j = qst[2 * X + q]
            qst[2 * X + q] = -1
        if srv[0] != 0 and sl // S == 3 and not late:   # the update CPU passes to its FIFO's head
            i = sl % S
            srv[1 + 2 * S + i] = -1
            if srv[1 + S + i] > 0:
                w2 = srv[1 + 3 * S + i * W + srv[1 + i]]
                srv[1 + i] = (srv[1 + i] + 1) % W
                srv[1 + S + i] -= 1
                qst[2 * X + w2 * NS + sl] = -1
                start_op(w2, sl, now, -1, win, dims, cnt, wst, ost, ofl, qst, qch, qbuf,
                         op_work, factors, ht, hi, lin, lfl, srv)
        base = wst[W + w]
        finished = True
        if is_link:
            o = w * M + j
            thr = ofl[2 * WM + o]
            if thr >= 0.0 and qch[q] == ofl[WM + o] - thr:
                # the stall point of a mid-transfer stall: rejoin rto later with the rest;
                # the link is freed below
                ofl[WM + o] = thr
                ofl[2 * WM + o] = -1.0
                cnt[1] = heap_push(ht, hi, cnt[1], now + rto, qst[3 * X + q], w, -1 - j)
                finished = False
            elif qch[q] < ofl[WM + o]:      # first HTTP/2 chunk: back to the queue's end
                ofl[WM + o] -= qch[q]
                qbuf[q * Q + qst[X + q]] = j
                qst[X + q] += 1
                finished = False
            elif tmo == 1 and stalls[(w * N + wst[2 * W + w]) * M + j] != 0:
                # bytes delivered, completion rto later; the link is freed below
                cnt[1] = heap_push(ht, hi, cnt[1], now + rto, qst[3 * X + q], w, -1 - j)
                finished = False
        elif late and tmo == 2:             # back from a mid-transfer stall: rejoin the link
            qbuf[q * Q + qst[X + q]] = j
            qst[X + q] += 1
            if qst[2 * X + q] == -1:
                start_op(w, sl, now, j, win, dims, cnt, wst, ost, ofl, qst, qch, qbuf, op_work,
                         factors, ht, hi, lin, lfl, srv)
            finished = False
        if finished:
            wst[3 * W + w] -= 1
            if record != 0:
                r = cnt[3]
                rec_i[3 * r] = w
                rec_i[3 * r + 1] = wst[2 * W + w]
                rec_i[3 * r + 2] = base + j
                kind = op_slot[base + j] // S
                if kind == 1 or kind == 3:  # computations: the actual start, after any wait
                    rec_t[2 * r] = ofl[WM + w * M + j]
                else:
                    rec_t[2 * r] = ofl[w * M + j]
                rec_t[2 * r + 1] = now
                cnt[3] = r + 1
            for e in range(succ_ptr[base + j], succ_ptr[base + j + 1]):
                x = succ_idx[e]
                o = w * M + x
                ost[o] -= 1
                if ost[o] == 0:             # ready: queue it; start it if w is not using the slot
                    s2 = op_slot[base + x]
                    q2 = w * NS + s2
                    qbuf[q2 * Q + qst[X + q2]] = x
                    qst[X + q2] += 1
                    if qst[2 * X + q2] == -1:
                        start_op(w, s2, now, j, win, dims, cnt, wst, ost, ofl, qst, qch, qbuf,
                                 op_work, factors, ht, hi, lin, lfl, srv)
        if not late and qst[2 * X + q] == -1:   # (-2: next ps op waits for the server)
            if qst[q] < qst[X + q]:         # more ops of w on this resource (line 28)
                start_op(w, sl, now, j, win, dims, cnt, wst, ost, ofl, qst, qch, qbuf, op_work,
                         factors, ht, hi, lin, lfl, srv)
            elif is_link:                   # w leaves active[r] (line 30)
                link_leave(w, l, dims, lin)
        if wst[3 * W + w] == 0:             # fix 2: every op of the step has finished
            k = wst[2 * W + w]
            step_end[w * N + k] = now
            # critical path: back from the last op, through the op whose completion
            # started each op, to the step start
            x = j
            tcur = now
            while x >= 0:
                t0 = ofl[w * M + x]
                crit[(w * N + k) * 4 + op_slot[base + x] // S] += tcur - t0
                tcur = t0
                x = ost[WM + w * M + x]
            wst[2 * W + w] = k + 1
            if sync == 0:
                if k + 1 < N:
                    start_step(w, now, win, dims, cnt, wst, ost, ofl, qst, qch, qbuf, op_work,
                               factors, ht, hi, lin, lfl, samples, step_first, step_nops,
                               root_ptr, root_idx, op_ndeps, op_slot, step_start, srv,
                               stall_u, tmo)
            else:
                ndone += 1
                if ndone == W:              # barrier (Li et al. 2022, Algorithm 1 line 36)
                    ndone = 0
                    if k + 1 < N:
                        for w2 in range(W):
                            start_step(w2, now, win, dims, cnt, wst, ost, ofl, qst, qch, qbuf,
                                       op_work, factors, ht, hi, lin, lfl, samples, step_first,
                                       step_nops, root_ptr, root_idx, op_ndeps, op_slot,
                                       step_start, srv, stall_u, tmo)
    for w in range(W):
        if wst[2 * W + w] != N:
            cnt[4] = 1
    return 0


#: Helpers called by ``run`` (the compiled variant compiles them too).
HELPERS = ("heap_push", "heap_pop", "advance", "set_rates", "next_link", "link_push",
           "link_pop", "link_advance", "link_next", "link_leave", "start_op", "start_step")
#: Helpers numba inlines into their callers (called once per event or more).
INLINE = ("heap_push", "heap_pop", "advance", "set_rates", "next_link", "link_push", "link_pop",
          "link_advance", "link_next", "link_leave", "start_op", "start_step")
