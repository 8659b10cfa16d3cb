"""Communication and aggregation times with parameter servers (Zhang et al. 2023, eqs. 10-18).

Workers send gradients to K parameter servers through a top-of-rack switch.
A message crosses *non-barrier* links at line rate (eq. 10) and *barrier*
links (Definition 7: the links into the side with fewer machines) through an
M/M/1 queue at the switch (eqs. 11-12); each server aggregates the granules
of all N workers one after the other, after a delay between two extremes
(eqs. 13-18).

* links and packets: :func:`barrier_links`, :func:`packet_count`;
* forward and backward communication (FC, BC): :func:`non_barrier_time`,
  :func:`barrier_forward_time`, :func:`barrier_time`,
  :func:`communication_time` (eqs. 10-12);
* aggregation (AG): :func:`aggregation_granularity`,
  :func:`aggregation_time`, :func:`aggregation_delay_min`,
  :func:`aggregation_delay_max`, :func:`aggregation_delay`,
  :func:`max_aggregation_time` (eqs. 13-18).

Decisions on the paper's ambiguities, each a named option:

* R in eqs. 10 and 15 is the link bandwidth B;
* units (``units=``, one of :data:`UNITS`): eqs. 11, 15 and 16 as printed mix
  packets and bytes.  In ``"printed"`` (the default) they are evaluated
  literally in SI units: eq. 11 ``1 / (S_f - 1/B)``, eq. 15 ``G / B``, eq. 16
  ``(N G - N + 1) / B`` with G in packets and B in bytes/s (which makes the
  two delays negligible).  ``"sound"`` is the dimensionally consistent
  reading: packets become bytes through the packet size (``G pks / B`` and
  ``(N G - N + 1) pks / B``) and the M/M/1 arrival rate of eq. 11 is a packet
  rate, ``B / pks`` unless given (``1 / (S_f - lambda)``; infinite when
  ``lambda >= S_f``);
* eq. 16 is a maximum delay: when G < 1 packet it would fall below eq. 15, so
  the maximum is taken as ``max(eq. 16, eq. 15)``;
* eq. 18 uses G of eq. 13 unless a granularity is given; the ceiling of
  ``PN / (G K)`` is taken with a relative tolerance of 1e-12 so that eq. 13's
  own G gives exactly one round.

References
----------
Zhang, Zhang, Wei, Pan, Huang 2023, "Performance Modeling and Analysis of
Distributed Deep Neural Network Training with Parameter Server", Definitions
7-8, eqs. 10-18.
"""

from __future__ import annotations

import numpy as np

from .. import _validate as _v

__all__ = [
    "UNITS",
    "barrier_links", "packet_count", "non_barrier_time", "barrier_forward_time",
    "barrier_time", "communication_time", "aggregation_granularity", "aggregation_time",
    "aggregation_delay_min", "aggregation_delay_max", "aggregation_delay",
    "max_aggregation_time",
]

#: Readings of eqs. 11, 15, 16 (see the module notes).
UNITS = ("printed", "sound")


def barrier_links(n_workers, n_ps) -> tuple[str, int]:
    """Which links are the barrier links, and how many (Definition 7).

    With fewer servers than workers (K < N) the barrier links are the K links
    from the top-of-rack switch to the parameter servers; otherwise the N
    links from the switch to the workers.

    Parameters
    ----------
    n_workers : int
        N workers (>= 1).
    n_ps : int
        K parameter servers (>= 1).

    Returns
    -------
    (str, int)
        ``("ps", K)`` or ``("workers", N)``.

    References
    ----------
    Zhang et al. 2023, Definition 7 and Sec. IV-A.

    Examples
    --------
    >>> barrier_links(8, 2), barrier_links(2, 2)
    (('ps', 2), ('workers', 2))
    """
    n = _v.integer("n_workers", n_workers, minimum=1)
    k = _v.integer("n_ps", n_ps, minimum=1)
    return ("ps", k) if k < n else ("workers", n)


def packet_count(nbytes, packet_size=1500.0):
    """Packets PN needed to send ``nbytes``: ceil(nbytes / pks).

    Parameters
    ----------
    nbytes : float or array_like, bytes
        Data size (>= 0).
    packet_size : float or array_like, bytes
        Packet payload pks (> 0).

    Returns
    -------
    float or ndarray, packets

    References
    ----------
    Zhang et al. 2023, Table I (PN, pks), eq. 10.

    Examples
    --------
    >>> packet_count(97.49e6)
    64994.0
    """
    b = _v.checked("nbytes", nbytes)
    p = _v.checked("packet_size", packet_size, positive=True)
    return _v.broadcast_result(np.ceil(b / p * (1.0 - 1e-12)), b, p)


def non_barrier_time(n_packets, bandwidth, packet_size=1500.0, base_delay=0.0, alpha=1.0):
    """Time on a non-barrier link: t_base + alpha PN pks / R (eq. 10, R = link bandwidth B).

    Parameters
    ----------
    n_packets : float or array_like, packets
        PN(l) (>= 0).
    bandwidth : float or array_like, bytes/s
        Link bandwidth B (> 0), the R of eq. 10.
    packet_size : float or array_like, bytes
        pks (> 0).
    base_delay : float or array_like, s
        Startup, propagation and processing delay (>= 0).
    alpha : float or array_like
        Protocol factor (>= 0; 1 = payload only).

    Returns
    -------
    float or ndarray, s

    References
    ----------
    Zhang et al. 2023, eq. 10.

    Examples
    --------
    >>> non_barrier_time(1000, 1.25e9, 1500, base_delay=1e-4)   # 1e-4 + 1.5e6 / 1.25e9
    0.0013
    """
    n = _v.checked("n_packets", n_packets)
    b = _v.checked("bandwidth", bandwidth, positive=True)
    p = _v.checked("packet_size", packet_size, positive=True)
    d = _v.checked("base_delay", base_delay)
    a = _v.checked("alpha", alpha)
    return _v.broadcast_result(d + a * n * p / b, n, b, p, d, a)


def barrier_forward_time(switch_rate, bandwidth, *, units="printed", packet_size=1500.0,
                         arrival_rate=None):
    """M/M/1 sojourn time of a packet at a barrier-link switch: 1 / (mu - lambda) (eq. 11).

    ``"printed"``: ``1 / (S_f - 1/B)`` literally (S_f packets/s, B bytes/s;
    about ``1 / S_f`` in SI).  ``"sound"``: ``1 / (S_f - lambda)`` with lambda
    a packet rate, ``B / pks`` (the link at line rate) unless
    ``arrival_rate`` is given.  An unstable queue (lambda >= S_f) gives ``inf``.

    Parameters
    ----------
    switch_rate : float or array_like, packets/s
        Switch forwarding speed S_f (> 0), the service rate mu.
    bandwidth : float or array_like, bytes/s
        Link bandwidth B (> 0).
    units : {"printed", "sound"}
        Reading of the equation (module notes).
    packet_size : float or array_like, bytes
        pks, for ``"sound"``.
    arrival_rate : float or array_like or None, packets/s
        lambda for ``"sound"``; None: ``B / pks``.

    Returns
    -------
    float or ndarray, s

    References
    ----------
    Zhang et al. 2023, eq. 11.

    Examples
    --------
    >>> barrier_forward_time(2e6, 1.25e9, units="sound", packet_size=1250)   # 1/(2e6 - 1e6)
    1e-06
    """
    mu = _v.checked("switch_rate", switch_rate, positive=True)
    b = _v.checked("bandwidth", bandwidth, positive=True)
    _v.choice("units", units, UNITS)
    p = _v.checked("packet_size", packet_size, positive=True)
    if units == "printed":
        lam = 1.0 / b
    else:
        lam = b / p if arrival_rate is None else _v.checked("arrival_rate", arrival_rate)
    with np.errstate(divide="ignore"):
        t = np.where(mu > lam, 1.0 / np.where(mu > lam, mu - lam, 1.0), np.inf)
    return _v.broadcast_result(t, mu, b, p, lam)


def barrier_time(switch_rate, bandwidth, hops=1, **options):
    """Forward communication time on the barrier link: h t_forward (eq. 12).

    Parameters
    ----------
    switch_rate, bandwidth
        As in :func:`barrier_forward_time`.
    hops : int or array_like
        h, barrier hops from a worker to its aggregator (whole, >= 0).
    **options
        ``units``, ``packet_size``, ``arrival_rate`` of :func:`barrier_forward_time`.

    Returns
    -------
    float or ndarray, s

    References
    ----------
    Zhang et al. 2023, eqs. 11-12.

    Examples
    --------
    >>> barrier_time(2e6, 1.25e9, 3, units="sound", packet_size=1250)
    3e-06
    """
    h = _v.checked("hops", hops, integer=True)
    t = barrier_forward_time(switch_rate, bandwidth, **options)
    with np.errstate(invalid="ignore"):
        out = np.where(np.asarray(h) == 0, 0.0, h * np.asarray(t))
    return _v.broadcast_result(out, t, h)


def communication_time(n_packets, bandwidth, *, packet_size=1500.0, base_delay=0.0, alpha=1.0,
                       switch_rate=None, hops=1, units="printed", arrival_rate=None):
    """Forward (FC) or backward (BC) communication time: non-barrier + barrier (eqs. 10-12).

    ``t = t_base + alpha PN pks / B + h t_forward``; without ``switch_rate``
    the barrier term is left out.

    Parameters
    ----------
    n_packets : float or array_like, packets
        PN(l) (>= 0); no packets means no time at all.
    bandwidth : float or array_like, bytes/s
        Link bandwidth B (> 0).
    packet_size, base_delay, alpha
        As in :func:`non_barrier_time`.
    switch_rate, hops, units, arrival_rate
        As in :func:`barrier_time`; ``switch_rate=None`` omits eqs. 11-12.

    Returns
    -------
    float or ndarray, s

    References
    ----------
    Zhang et al. 2023, eqs. 10-12 ("the combination of barrier time and non-barrier time").

    Examples
    --------
    >>> round(communication_time(1000, 1.25e9, base_delay=1e-4, switch_rate=1e6, hops=2), 9)
    0.0013020000
    """
    t = non_barrier_time(n_packets, bandwidth, packet_size, base_delay, alpha)
    if switch_rate is not None:
        t = np.asarray(t) + np.asarray(barrier_time(switch_rate, bandwidth, hops, units=units,
                                                    packet_size=packet_size,
                                                    arrival_rate=arrival_rate))
    n = np.asarray(n_packets, dtype=float)
    return _v.broadcast_result(np.where(n > 0, t, 0.0), t, n_packets)


def aggregation_granularity(n_packets, n_ps):
    """Aggregation granularity G = PN(l) / K packets per server (eq. 13).

    Parameters
    ----------
    n_packets : float or array_like, packets
        PN(l) (>= 0).
    n_ps : int or array_like, servers
        K (whole, >= 1).

    Returns
    -------
    float or ndarray, packets

    References
    ----------
    Zhang et al. 2023, Definition 8, eq. 13.

    Examples
    --------
    >>> aggregation_granularity(1000, 4)
    250.0
    """
    n = _v.checked("n_packets", n_packets)
    k = _v.counts("n_ps", n_ps)
    return _v.broadcast_result(n / k, n, k)


def aggregation_time(granularity, a=0.0, b=0.0):
    """Time to aggregate one granule: t_ag = a + b G (eq. 14).

    Parameters
    ----------
    granularity : float or array_like, packets
        G (>= 0).
    a : float or array_like, s
        Fixed cost per aggregation (>= 0).
    b : float or array_like, s/packet
        Cost per packet aggregated (>= 0).

    Returns
    -------
    float or ndarray, s

    References
    ----------
    Zhang et al. 2023, eq. 14.

    Examples
    --------
    >>> aggregation_time(250, 1e-5, 1e-7)
    3.5e-05
    """
    g = _v.checked("granularity", granularity)
    aa = _v.checked("a", a)
    bb = _v.checked("b", b)
    return _v.broadcast_result(aa + bb * g, g, aa, bb)


def _delay_unit(bandwidth, units, packet_size):
    b = _v.checked("bandwidth", bandwidth, positive=True)
    _v.choice("units", units, UNITS)
    p = _v.checked("packet_size", packet_size, positive=True)
    return b, p, (1.0 if units == "printed" else p)


def aggregation_delay_min(granularity, bandwidth, *, units="printed", packet_size=1500.0):
    """Smallest aggregation delay: one granule received alone, G / R (eq. 15, R = B).

    ``"printed"``: ``G / B`` (G in packets, as printed); ``"sound"``: ``G pks / B``.

    Parameters
    ----------
    granularity : float or array_like, packets
        G (>= 0).
    bandwidth : float or array_like, bytes/s
        B (> 0).
    units : {"printed", "sound"}
        Reading (module notes).
    packet_size : float or array_like, bytes
        pks, for ``"sound"``.

    Returns
    -------
    float or ndarray, s

    References
    ----------
    Zhang et al. 2023, eq. 15.

    Examples
    --------
    >>> aggregation_delay_min(250, 1.25e9, units="sound", packet_size=1500)   # 375 kB at 10 Gbps
    0.0003
    """
    g = _v.checked("granularity", granularity)
    b, p, unit = _delay_unit(bandwidth, units, packet_size)
    return _v.broadcast_result(g * unit / b, g, b, p)


def aggregation_delay_max(granularity, n_workers, bandwidth, *, units="printed",
                          packet_size=1500.0):
    """Largest aggregation delay: N granules arriving in lockstep, (N G - N + 1) / B (eq. 16).

    Never below eq. 15 (for G < 1 packet eq. 16 would be).

    Parameters
    ----------
    granularity : float or array_like, packets
        G (>= 0).
    n_workers : int or array_like, workers
        N (whole, >= 1).
    bandwidth, units, packet_size
        As in :func:`aggregation_delay_min`.

    Returns
    -------
    float or ndarray, s

    References
    ----------
    Zhang et al. 2023, eq. 16.

    Examples
    --------
    >>> aggregation_delay_max(250, 4, 1.25e9, units="sound", packet_size=1500)   # 997 packets
    0.0011964
    """
    g = _v.checked("granularity", granularity)
    n = _v.counts("n_workers", n_workers)
    b, p, unit = _delay_unit(bandwidth, units, packet_size)
    return _v.broadcast_result(np.maximum(n * g - n + 1.0, g) * unit / b, g, n, b, p)


def aggregation_delay(granularity, n_workers, bandwidth, theta=0.5, *, units="printed",
                      packet_size=1500.0):
    """Aggregation delay between its extremes: min + theta (max - min) (eqs. 15-16).

    The paper makes the actual delay "a range tunable parameter" between the
    two extremes; theta in [0, 1] places it (0: eq. 15, 1: eq. 16).

    Parameters
    ----------
    granularity, n_workers, bandwidth, units, packet_size
        As in :func:`aggregation_delay_max`.
    theta : float or array_like
        Position between the extremes, in [0, 1].

    Returns
    -------
    float or ndarray, s

    References
    ----------
    Zhang et al. 2023, eqs. 15-16 and the text after them.

    Examples
    --------
    >>> round(aggregation_delay(250, 4, 1.25e9, 0.5, units="sound"), 9)   # (0.3 + 1.1964) / 2 ms
    0.0007482
    """
    th = _v.fraction("theta", theta)
    lo = aggregation_delay_min(granularity, bandwidth, units=units, packet_size=packet_size)
    hi = aggregation_delay_max(granularity, n_workers, bandwidth, units=units,
                               packet_size=packet_size)
    return _v.broadcast_result(np.asarray(lo) + th * (np.asarray(hi) - np.asarray(lo)), lo, hi, th)


def max_aggregation_time(n_packets, n_workers, n_ps, bandwidth, a=0.0, b=0.0, *, theta=0.5,
                         granularity=None, units="printed", packet_size=1500.0):
    """Latest aggregation completion over servers: delay + N ceil(PN / (G K)) (a + b G) (eq. 18).

    Every server aggregates the granules of all N workers one after the other,
    ``ceil(PN / (G K))`` granules of each; the delay before the first is
    :func:`aggregation_delay`.  With G of eq. 13 (the default) there is one
    granule per worker and server: ``delay + N (a + b PN / K)``.  No packets:
    0 s.

    Parameters
    ----------
    n_packets : float or array_like, packets
        PN(l) (>= 0).
    n_workers : int or array_like, workers
        N (whole, >= 1).
    n_ps : int or array_like, servers
        K (whole, >= 1).
    bandwidth : float or array_like, bytes/s
        B (> 0).
    a, b
        As in :func:`aggregation_time` (s and s/packet).
    theta : float or array_like
        Delay position in [0, 1] (:func:`aggregation_delay`).
    granularity : float or array_like or None, packets
        G (> 0); None: eq. 13, PN / K.
    units, packet_size
        As in :func:`aggregation_delay_min`.

    Returns
    -------
    float or ndarray, s

    References
    ----------
    Zhang et al. 2023, eqs. 13-18.

    Examples
    --------
    >>> round(max_aggregation_time(1000, 4, 4, 1.25e9, 1e-5, 1e-7, units="sound"), 9)
    0.0008882
    """
    n = _v.checked("n_packets", n_packets)
    w = _v.counts("n_workers", n_workers)
    k = _v.counts("n_ps", n_ps)
    if granularity is None:
        g = n / k
    else:
        g = _v.checked("granularity", granularity, positive=True)
    delay = aggregation_delay(g, w, bandwidth, theta, units=units, packet_size=packet_size)
    with np.errstate(divide="ignore", invalid="ignore"):
        rounds = np.ceil(np.asarray(n, dtype=float) / np.asarray(g * k, dtype=float)
                         * (1.0 - 1e-12))
    with np.errstate(invalid="ignore"):
        work = w * rounds * np.asarray(aggregation_time(g, a, b))
        out = np.where(np.asarray(n) > 0, np.asarray(delay) + work, 0.0)
    return _v.broadcast_result(out, n, w, k, g, delay)

