"""Packet-level ns-3 runs of one parameter-server job: the reference of the validation matrix.

One parameter server (PS) and K workers on a star: every host has its own
full-duplex ``PointToPoint`` NIC link of rate ``bandwidth`` to one switch (an
IPv4 router).  Real TCP (NewReno) moves the model and the gradients; the PS
and the workers are small C++ applications compiled in-process by cppyy, as
in :mod:`perfmodel.placement.ns3`, whose runtime this module reuses.

Semantics (Li et al. 2022, Sec. 3, eqs. 7-10; Sec. 2.1 / Fig. 5 for async):

* ``mode="sync"``: the PS sends the model to every worker; each worker
  computes (forward then backward) and pushes its gradients; once all K
  gradients are in, the PS updates and the next step starts (barrier).
* ``mode="async"``: each worker on its own pulls the model, computes and
  pushes its gradients; the PS applies each gradient as it arrives and the
  worker pulls again once its gradient is applied (the closed network of
  Li et al. 2022, Fig. 5: uplink -> server -> downlink -> worker).  Every gradient
  is one SGD step.
* ``update``: the PS update costs ``t_update`` once per step (``"per_step"``,
  Li et al. 2022, eq. 7's T_S) or once per gradient (``"per_gradient"``).  The PS
  applies updates one at a time, first come first served.  In async mode
  every gradient is a step, so the two options coincide.
* ``overlap=True`` (Li et al. 2022, eq. 10 / eq. 6; our scheme, the papers leave it
  open): the model is cut into ``chunks`` equal byte blocks standing for
  layer groups.  The PS sends them in forward order; the worker runs the
  forward pass of block c (``t_forward / chunks``) once block c has arrived
  and block c-1's forward is done.  The backward pass runs the blocks in
  reverse order (``t_backward / chunks`` each) and pushes each block's
  gradients as soon as that block's backward is done.  Without overlap the
  whole model is one block.
* compute times: each worker step draws a factor ``f`` from a lognormal of
  mean 1 and coefficient of variation ``compute_cv`` (``sigma^2 =
  ln(1 + cv^2)``, ``mu = -sigma^2 / 2``; ``cv = 0``: constant) and computes
  ``f t_forward`` then ``f t_backward``; draws from ``seed`` only.
* ``queue``: the egress queue discipline of every device on the NIC links
  (the hosts' NICs and the switch ports facing them, since the switch port
  toward the PS is where the K gradient pushes meet): ``"fifo"`` is ns-3's
  ``FifoQueueDisc`` (1000 packets), ``"fair"`` is ``FqCoDelQueueDisc``
  (deficit round robin over per-flow queues) with CoDel's dropping switched
  off (target 100 s, interval 1000 s) so it only schedules, and 65536 flow
  buckets so flows rarely share a queue.  The device queue below it holds
  one packet so the discipline, not the device, decides the order.  The
  FIFO's 1000 packets (Linux's default txqueuelen) can overflow when more
  than about eleven full 128 KiB TCP windows (90 segments) meet at one port,
  so large FIFO regimes may see tail drops; the fair queue holds 10240.
* ``loss_rate``: every device drops each received packet with this
  probability (ns-3 ``RateErrorModel``, per packet): a data packet crosses
  two links, so it is lost end to end with about ``2 loss_rate``; ACKs too.
  Seeded through ns-3's run number.

Scaling as in :mod:`perfmodel.placement.ns3` (Jain, Kumar, Mao, Sec. 4.4): bytes and
link rates are divided by ``scale``; compute, update and link delays are
not, so fluid transfer times are unchanged.  TCP sees ``scale`` times fewer
segments per transfer, so per-packet loss events per transfer are ``scale``
times rarer than at full size with the same ``loss_rate``.

TCP settings (ours): NewReno, 1448-byte segments (1502 bytes on the wire with
PPP, IP, TCP and timestamp headers: goodput 1448/1502 of the line rate),
minimum RTO 1 s (RFC 6298 and ns-3's default; with Linux's 200 ms, spurious
timeouts at scale 1000 stalled ns-3 for long stretches), 128 KiB socket buffers.

References
----------
Li, Paolieri, Golubchik, Lin, Yan 2022, "Predicting Throughput of Distributed
SGD" (IEEE TPDS): Sec. 2.1 and Fig. 5 (async), Sec. 3.1.1 eqs. 7-10 (sync,
overlap).  Jain, Kumar, Mao, "Characterizing Distributed Deep Learning Training
Performance in Datacenters": Sec. 4 (ns-3 applications, scaling).
"""

from __future__ import annotations

import argparse
import csv
import dataclasses
import importlib.metadata
import math
import sys
import time as _time

import numpy as np

from .. import _validate as _v
from .. import zoo
from ..errors import SimulationStalled, SpecError
from . import ns3 as _ns3

__all__ = ["Ns3JobResult", "simulate_ps_job_ns3", "generate_matrix", "matrix_rows",
           "TCP_VARIANTS", "LOSS_BASED_TCP", "link_sharing_of", "QUEUES", "DEFAULT_BUFFER",
           "JITTERS", "PARETO_SHAPE",
           "DCTCP_MARK_PACKETS", "DCTCP_CE_THRESHOLD", "DELAYED_ACK_TIMEOUT", "block_bytes",
           "ns3_version",
           "MATRIX_COLUMNS", "LINK_EFFICIENCY", "DEFAULT_JOB_SCALE", "DEFAULT_T_UPDATE",
           "available", "matrix_regimes", "MATRIX_WORKERS", "MATRIX_LOSS", "MATRIX_CV", "MATRIX_SCALE",
           "MATRIX_STEPS", "MATRIX_ASYNC_STEPS", "MATRIX_WARMUP", "MATRIX_BATCHES", "main"]

available = _ns3.available

#: TCP goodput over line rate: 1448 payload bytes per 1502 bytes on the wire.
LINK_EFFICIENCY = 1448.0 / 1502.0
#: Default divisor of bytes and rates (fast runs; see the module notes).
DEFAULT_JOB_SCALE = 1000.0
#: PS update time used for the matrix, s per update (resnet50-pipedream's profile has 0).
DEFAULT_T_UPDATE = 0.02

#: TCP congestion controls: name -> ns-3 socket type.  DCTCP marks instead of queueing
#: (ECN: RED at a fixed threshold on a FIFO port, a sojourn threshold on a fair queue).
#: Vegas (delay-based), BBR (rate-based), HighSpeed and Westwood+ (loss-based) are what
#: the probe corpus runs: controls no rule was designed on; YeAH, Veno, Illinois and
#: H-TCP the second probe's; Hybla, Scalable, BIC and Linux Reno the third's.
TCP_VARIANTS = {"newreno": "ns3::TcpNewReno", "cubic": "ns3::TcpCubic", "dctcp": "ns3::TcpDctcp",
                "vegas": "ns3::TcpVegas", "bbr": "ns3::TcpBbr",
                "highspeed": "ns3::TcpHighSpeed", "westwood": "ns3::TcpWestwoodPlus",
                "yeah": "ns3::TcpYeah", "veno": "ns3::TcpVeno", "illinois": "ns3::TcpIllinois",
                "htcp": "ns3::TcpHtcp", "hybla": "ns3::TcpHybla",
                "scalable": "ns3::TcpScalable", "bic": "ns3::TcpBic",
                "linuxreno": "ns3::TcpLinuxReno"}
#: The controls that fill a drop-tail queue until it drops (loss is their congestion
#: signal, delay at most a hint): all but Vegas (delay-based), BBR (paces at the rate it
#: measures) and DCTCP (backs off at ECN marks), which keep a FIFO queue short.
LOSS_BASED_TCP = frozenset(TCP_VARIANTS) - {"vegas", "bbr", "dctcp"}
#: Egress queue disciplines of the NIC links.
QUEUES = ("fifo", "fair")


def link_sharing_of(queue: str, tcp: str) -> str:
    """How a run's flows share a link, in :func:`~perfmodel.fit.selection.select_model`'s
    terms: ``"fifo"`` where loss-based TCP (:data:`LOSS_BASED_TCP`) fills drop-tail FIFO
    host queues, so that flows meeting at a port pass it in the order their packets
    queued; ``"fair"`` on per-flow fair queues, or where the TCP keeps a FIFO queue short.

    Examples
    --------
    >>> link_sharing_of("fifo", "cubic"), link_sharing_of("fifo", "vegas")
    ('fifo', 'fair')
    >>> link_sharing_of("fair", "cubic")
    'fair'
    """
    if queue not in QUEUES:
        raise SpecError("queue", f"must be one of {', '.join(QUEUES)}, got {queue!r}")
    if tcp not in TCP_VARIANTS:
        raise SpecError("tcp", f"must be one of {', '.join(TCP_VARIANTS)}, got {tcp!r}")
    return "fifo" if queue == "fifo" and tcp in LOSS_BASED_TCP else "fair"
#: Default buffer of each queue, packets: Linux's txqueuelen, and FqCoDel's own limit.
DEFAULT_BUFFER = {"fifo": 1000, "fair": 10240}
#: Compute-time distributions of :func:`simulate_ps_job_ns3` (``jitter``).
JITTERS = ("none", "lognormal", "pareto")
#: Shape of the heavy-tailed (Pareto) compute factor: finite variance, a heavy tail.
PARETO_SHAPE = 2.5
#: DCTCP's marking threshold on a FIFO port (packets) and sojourn on a fair queue (s).
DCTCP_MARK_PACKETS, DCTCP_CE_THRESHOLD = 20, 1e-3
#: TCP's delayed-ACK timeout (s): ns-3's default, which every committed run used (Windows'
#: too; Linux waits at least 40 ms).  A receiver ACKs every second segment, or a lone one
#: when this runs out; DCTCP's small windows leave lone segments (docs/validation.md).
DELAYED_ACK_TIMEOUT = 0.2

MATRIX_COLUMNS = ("regime", "queue", "loss_rate", "bandwidth", "mode", "overlap", "update",
                  "compute_cv", "workers", "n_ps", "batch_size", "throughput",
                  "throughput_std", "steps", "seed", "wall_seconds")

_CPP = r"""
#include "ns3/core-module.h"
#include "ns3/network-module.h"
#include "ns3/internet-module.h"
#include "ns3/point-to-point-module.h"
#include "ns3/traffic-control-module.h"
#include <deque>
#include <map>
#include <string>
#include <vector>
#include <algorithm>

namespace perfmodel_ns3job {
using namespace ns3;

// Li et al. 2022, Sec. 3: P servers, K workers, sync (barrier) or async (per-worker loop).
// Every worker exchanges an even share of each block with every server over its own pair
// of TCP connections; each server updates its share of the model on a CPU of its own.
class JobRunner {
 public:
  int workers = 1, servers = 1, chunks = 1;
  double rate = 1e7, delay = 1e-5;            // bit/s, s
  double modelBytes = 1, gradBytes = 1;      // scaled bytes
  std::vector<double> chunkBytes;            // per block (empty: equal blocks)
  std::vector<double> fwdShare, bwdShare;    // per block share of T_F, T_B (empty: equal)
  double tForward = 0, tBackward = 0, tUpdate = 0, startTime = 0.01, stopTime = 1e6;
  bool isAsync = false, perGradient = false;
  int queueKind = 1;                         // 0 FIFO, 1 per-flow fair (FqCoDel)
  bool ecn = false;                          // mark instead of queue (DCTCP)
  uint32_t bufferPackets = 10240, markPackets = 20;
  double ceThreshold = 1e-3;                 // s: fair queue marks above this sojourn
  std::string tcp = "ns3::TcpNewReno";
  double lossRate = 0, minRto = 1.0, delAckTimeout = 0.2;
  uint32_t segmentSize = 1448, runNumber = 1;
  std::vector<double> factors;               // [worker][k], wrapped
  int perWorker = 1, target = 1;             // samples per worker; completions to record
  std::vector<double> doneTime;              // end of each step (sync) or gradient (async)
  std::vector<int> doneWorker;
  uint64_t queueDrops = 0, ecnMarks = 0;

  void Run();

 private:
  struct Flow {
    Ptr<Socket> tx;
    uint64_t pending = 0, sent = 0, rx = 0;
    std::deque<std::pair<uint64_t, int>> marks;   // (cumulative byte, chunk)
    Address peer;
  };
  std::vector<Flow> flows;                   // [0, KP): down (w, s); [KP, 2KP): up (w, s)
  std::map<Socket*, int> rxFlow;
  std::vector<Ptr<Socket>> keep;
  std::vector<int> iter, downIn, fwdNext, bwdLeft, applied;
  std::vector<std::vector<int>> downPieces, upPieces;   // [w][chunk], [s][w]
  std::vector<bool> fwdBusy, serverBusy;
  std::vector<double> fNow;
  std::vector<std::deque<int>> updQueue;     // per server
  std::vector<int> gradsIn;                  // per server
  int updatesDone = 0, serversDone = 0;
  QueueDiscContainer qdiscs;

  int Down(int w, int s) const { return w * servers + s; }
  int Up(int w, int s) const { return workers * servers + w * servers + s; }
  uint64_t BlockBytes(double total, int c) const {
    if (!chunkBytes.empty()) return (uint64_t)chunkBytes[c];
    uint64_t a = (uint64_t)std::floor(total * c / chunks);
    uint64_t b = (uint64_t)std::floor(total * (c + 1) / chunks);
    return std::max<uint64_t>(b - a, 1);
  }
  uint64_t Piece(uint64_t bytes, int s) const {
    if (servers == 1) return bytes;
    uint64_t a = bytes * (uint64_t)s / (uint64_t)servers;
    uint64_t b = bytes * (uint64_t)(s + 1) / (uint64_t)servers;
    return std::max<uint64_t>(b - a, 1);
  }
  double ForwardTime(int w, int c) const {
    return fwdShare.empty() ? fNow[w] * tForward / chunks : fNow[w] * tForward * fwdShare[c];
  }
  double BackwardTime(int w, int c) const {
    return bwdShare.empty() ? fNow[w] * tBackward / chunks : fNow[w] * tBackward * bwdShare[c];
  }
  void Fill(int f) { perfmodel_ns3::FillSocket(flows[f].tx, flows[f].pending); }
  void Send(int f, uint64_t bytes, int chunk) {
    Flow& fl = flows[f];
    fl.sent += bytes;
    fl.pending += bytes;
    fl.marks.push_back(std::make_pair(fl.sent, chunk));
    Fill(f);
  }
  void Connect(int f) {
    flows[f].tx->Bind();
    flows[f].tx->Connect(flows[f].peer);
    flows[f].tx->SetSendCallback(MakeCallback(&JobRunner::OnSendable, this));
  }
  void OnSendable(Ptr<Socket> s, uint32_t) {
    int f = perfmodel_ns3::FlowOfSocket(flows, s);
    if (f >= 0) Fill(f);
  }
  bool OnConnRequest(Ptr<Socket>, const Address&) { return true; }
  void OnAccept(Ptr<Socket> s, const Address&) {
    rxFlow[PeekPointer(s)] = perfmodel_ns3::AcceptedFlow(s);
    keep.push_back(s);
    s->SetRecvCallback(MakeCallback(&JobRunner::OnRecv, this));
  }
  void OnRecv(Ptr<Socket> s) {
    int f = rxFlow[PeekPointer(s)];
    Flow& fl = flows[f];
    Ptr<Packet> p;
    int down = workers * servers;
    while ((p = s->Recv())) {
      fl.rx += p->GetSize();
      while (!fl.marks.empty() && fl.rx >= fl.marks.front().first) {
        int c = fl.marks.front().second;
        fl.marks.pop_front();
        if (f < down) DownDelivered(f / servers, c);
        else UpDelivered((f - down) / servers, (f - down) % servers, c);
      }
    }
  }
  // worker w: pull, forward per block, backward per block (reverse), push per block
  void StartPull(int w) {
    fNow[w] = factors[(size_t)w * perWorker + iter[w] % perWorker];
    downIn[w] = 0; fwdNext[w] = 0; fwdBusy[w] = false;
    std::fill(downPieces[w].begin(), downPieces[w].end(), 0);
    for (int c = 0; c < chunks; ++c) {
      uint64_t bytes = BlockBytes(modelBytes, c);
      for (int s = 0; s < servers; ++s) Send(Down(w, s), Piece(bytes, s), c);
    }
  }
  void DownDelivered(int w, int c) {
    downPieces[w][c] += 1;
    while (downIn[w] < chunks && downPieces[w][downIn[w]] == servers) downIn[w] += 1;
    TryForward(w);
  }
  void TryForward(int w) {
    if (fwdBusy[w] || fwdNext[w] >= downIn[w]) return;
    fwdBusy[w] = true;
    Simulator::Schedule(Seconds(ForwardTime(w, fwdNext[w])), &JobRunner::ForwardDone, this, w);
  }
  void ForwardDone(int w) {
    fwdBusy[w] = false;
    fwdNext[w] += 1;
    if (fwdNext[w] < chunks) { TryForward(w); return; }
    bwdLeft[w] = chunks;
    Simulator::Schedule(Seconds(BackwardTime(w, chunks - 1)), &JobRunner::BackwardDone, this, w);
  }
  void BackwardDone(int w) {
    bwdLeft[w] -= 1;
    int c = bwdLeft[w];
    uint64_t bytes = BlockBytes(gradBytes, c);
    for (int s = 0; s < servers; ++s) Send(Up(w, s), Piece(bytes, s), c);
    if (c > 0)
      Simulator::Schedule(Seconds(BackwardTime(w, c - 1)), &JobRunner::BackwardDone, this, w);
  }
  void UpDelivered(int w, int s, int) {
    upPieces[s][w] += 1;
    if (upPieces[s][w] < chunks) return;
    upPieces[s][w] = 0;
    if (isAsync || perGradient) { Enqueue(s, w); return; }
    gradsIn[s] += 1;
    if (gradsIn[s] == workers) Enqueue(s, -1);
  }
  // each server applies updates of its share one at a time, first come first served
  void Enqueue(int s, int tag) {
    updQueue[s].push_back(tag);
    if (!serverBusy[s]) NextUpdate(s);
  }
  void NextUpdate(int s) {
    if (updQueue[s].empty()) { serverBusy[s] = false; return; }
    serverBusy[s] = true;
    Simulator::Schedule(Seconds(tUpdate / servers), &JobRunner::UpdateDone, this, s,
                        updQueue[s].front());
  }
  void UpdateDone(int s, int tag) {
    updQueue[s].pop_front();
    if (isAsync) {
      if (++applied[tag] == servers) {
        applied[tag] = 0;
        if (Record(tag)) return;
        iter[tag] += 1;
        StartPull(tag);
      }
    } else if (perGradient ? ++updatesDone == workers * servers : ++serversDone == servers) {
      if (Record(-1)) return;
      std::fill(gradsIn.begin(), gradsIn.end(), 0);
      updatesDone = 0; serversDone = 0;
      for (int w = 0; w < workers; ++w) { iter[w] += 1; StartPull(w); }
    }
    NextUpdate(s);
  }
  bool Record(int w) {
    doneTime.push_back(Simulator::Now().GetSeconds());
    doneWorker.push_back(w);
    if ((int)doneTime.size() >= target) { Simulator::Stop(); return true; }
    return false;
  }
};

void JobRunner::Run() {
  Config::SetDefault("ns3::TcpL4Protocol::SocketType", StringValue(tcp));
  Config::SetDefault("ns3::TcpSocket::SegmentSize", UintegerValue(segmentSize));
  Config::SetDefault("ns3::TcpSocketBase::MinRto", TimeValue(Seconds(minRto)));
  Config::SetDefault("ns3::TcpSocket::DelAckTimeout", TimeValue(Seconds(delAckTimeout)));
  RngSeedManager::SetSeed(1);
  RngSeedManager::SetRun(runNumber);
  // Streams drawn automatically (RED's marking in gentle mode) count on from the
  // previous run in this process unless reset: reset so a run depends on its seed only.
  RngSeedManager::ResetNextStreamIndex();
  int nHosts = workers + servers;            // hosts [0, P) are the servers
  NodeContainer sw, hosts;
  sw.Create(1);
  hosts.Create(nHosts);
  InternetStackHelper stack;
  stack.Install(sw);
  stack.Install(hosts);
  TrafficControlHelper tch;
  QueueSize size = QueueSize(std::to_string(bufferPackets) + "p");
  if (queueKind == 1 && ecn)
    tch.SetRootQueueDisc("ns3::FqCoDelQueueDisc", "Target", StringValue("100s"),
                         "Interval", StringValue("1000s"), "Flows", UintegerValue(65536),
                         "MaxSize", QueueSizeValue(size), "UseEcn", BooleanValue(true),
                         "CeThreshold", TimeValue(Seconds(ceThreshold)));
  else if (queueKind == 1)
    tch.SetRootQueueDisc("ns3::FqCoDelQueueDisc", "Target", StringValue("100s"),
                         "Interval", StringValue("1000s"), "Flows", UintegerValue(65536),
                         "MaxSize", QueueSizeValue(size));
  else if (ecn)
    tch.SetRootQueueDisc("ns3::RedQueueDisc", "UseEcn", BooleanValue(true),
                         "UseHardDrop", BooleanValue(false), "QW", DoubleValue(1.0),
                         "MinTh", DoubleValue(markPackets), "MaxTh", DoubleValue(markPackets),
                         "MaxSize", QueueSizeValue(size),
                         "LinkBandwidth", DataRateValue(DataRate((uint64_t)std::llround(rate))),
                         "LinkDelay", TimeValue(Seconds(delay)));
  else
    tch.SetRootQueueDisc("ns3::FifoQueueDisc", "MaxSize", QueueSizeValue(size));
  Ipv4AddressHelper addr;
  addr.SetBase("10.0.0.0", "255.255.255.252");
  std::vector<Ipv4Address> hostAddr(nHosts);
  int64_t stream = 1000;
  qdiscs = QueueDiscContainer();
  for (int h = 0; h < nHosts; ++h) {
    PointToPointHelper p2p;
    p2p.SetDeviceAttribute("DataRate", DataRateValue(DataRate((uint64_t)std::llround(rate))));
    p2p.SetChannelAttribute("Delay", TimeValue(Seconds(delay)));
    p2p.SetQueue("ns3::DropTailQueue", "MaxSize", QueueSizeValue(QueueSize("1p")));
    NetDeviceContainer d = p2p.Install(hosts.Get(h), sw.Get(0));
    qdiscs.Add(tch.Install(d));
    if (lossRate > 0) {
      for (uint32_t i = 0; i < d.GetN(); ++i) {
        Ptr<RateErrorModel> em = CreateObject<RateErrorModel>();
        em->SetAttribute("ErrorRate", DoubleValue(lossRate));
        em->SetAttribute("ErrorUnit", StringValue("ERROR_UNIT_PACKET"));
        em->AssignStreams(stream++);
        d.Get(i)->SetAttribute("ReceiveErrorModel", PointerValue(em));
      }
    }
    Ipv4InterfaceContainer ifs = addr.Assign(d);
    addr.NewNetwork();
    hostAddr[h] = ifs.GetAddress(0);
  }
  Ipv4GlobalRoutingHelper::PopulateRoutingTables();

  int pairs = workers * servers;
  flows.assign(2 * pairs, Flow());
  for (int f = 0; f < 2 * pairs; ++f) {
    bool isUp = f >= pairs;
    int g = f % pairs, w = g / servers, s = g % servers;
    int worker = servers + w, server = s;
    int src = isUp ? worker : server, dst = isUp ? server : worker;
    uint16_t port = (uint16_t)(10000 + f);
    Ptr<Socket> listener = Socket::CreateSocket(hosts.Get(dst), TcpSocketFactory::GetTypeId());
    listener->Bind(InetSocketAddress(Ipv4Address::GetAny(), port));
    listener->Listen();
    listener->SetAcceptCallback(MakeCallback(&JobRunner::OnConnRequest, this),
                                MakeCallback(&JobRunner::OnAccept, this));
    keep.push_back(listener);
    flows[f].tx = Socket::CreateSocket(hosts.Get(src), TcpSocketFactory::GetTypeId());
    flows[f].peer = InetSocketAddress(hostAddr[dst], port);
    Simulator::Schedule(Seconds(0.0), &JobRunner::Connect, this, f);
  }
  iter.assign(workers, 0); downIn.assign(workers, 0); fwdNext.assign(workers, 0);
  bwdLeft.assign(workers, 0); applied.assign(workers, 0); fwdBusy.assign(workers, false);
  downPieces.assign(workers, std::vector<int>(chunks, 0));
  upPieces.assign(servers, std::vector<int>(workers, 0));
  fNow.assign(workers, 1.0);
  updQueue.assign(servers, std::deque<int>()); serverBusy.assign(servers, false);
  gradsIn.assign(servers, 0); updatesDone = 0; serversDone = 0;
  doneTime.clear(); doneWorker.clear();
  for (int w = 0; w < workers; ++w)
    Simulator::Schedule(Seconds(startTime), &JobRunner::StartPull, this, w);
  Simulator::Stop(Seconds(stopTime));
  Simulator::Run();
  queueDrops = 0; ecnMarks = 0;
  for (uint32_t i = 0; i < qdiscs.GetN(); ++i) {
    QueueDisc::Stats st = qdiscs.Get(i)->GetStats();
    queueDrops += st.nTotalDroppedPackets;
    ecnMarks += st.nTotalMarkedPackets;
  }
  qdiscs = QueueDiscContainer();
  Simulator::Destroy();
  flows.clear(); rxFlow.clear(); keep.clear();
}

}  // namespace perfmodel_ns3job
"""


_STATE: dict = {}


def _runtime():
    """ns-3 through cppyy with this module's applications compiled (once per process)."""
    if "cppyy" not in _STATE:
        cppyy = _ns3.runtime()   # also compiles the socket helpers _CPP calls
        cppyy.cppdef(_CPP)
        _STATE["cppyy"] = cppyy
    return _STATE["cppyy"]


@dataclasses.dataclass(frozen=True)
class Ns3JobResult:
    """Measured speed of one packet-level run of a parameter-server job.

    Attributes
    ----------
    throughput : float, samples/s
        ``step_rate * batch_size`` over the measured window.
    step_rate : float, steps/s
        SGD steps per second summed over workers: K / step time in sync mode,
        gradients applied per second in async mode.
    throughput_std : float, samples/s
        Standard deviation of the throughput over ``batches`` equal batches of
        the measured window (batch means; not divided by sqrt(batches)).
    step_times : ndarray, s
        Sync: the duration of each measured step.  Async: the time between
        consecutive gradients applied for the same worker (each worker's
        cycle), over the measured window.
    wall_seconds : float, s
        Host time spent inside ns-3.
    meta : dict
        Every setting of the run.
    ends : ndarray, s, shape (workers, steps) or None
        When each worker's steps ended, warm-up included (sync: the barriers,
        the same for every worker; async: its gradients applied), as
        :attr:`perfmodel.sim.engine.SimResult.ends`: how far apart the
        workers drift shows in it.
    """

    throughput: float
    step_rate: float
    throughput_std: float
    step_times: np.ndarray
    wall_seconds: float
    meta: dict
    ends: np.ndarray | None = None

    @property
    def mean_step_time(self) -> float:
        """Mean of ``step_times``, s."""
        return float(np.mean(self.step_times))


def _compute_factors(cv: float, workers: int, per_worker: int, seed,
                     jitter: str = "lognormal") -> np.ndarray:
    """Compute-time factors of mean 1 and coefficient of variation ``cv``, shape (K, n).

    ``"lognormal"``: a lognormal factor.  ``"pareto"`` (heavy-tailed):
    ``1 + s (X - 1)`` with X Pareto of shape :data:`PARETO_SHAPE` and mean 1,
    ``s = cv / CV(X)``; it stays above ``1 - s / shape`` (> 0 for cv below
    about 2).  ``"none"`` or ``cv = 0``: constant.
    """
    if cv == 0 or jitter == "none":
        return np.ones((workers, per_worker))
    rng = np.random.default_rng(_v.seed_sequence(seed))
    if jitter == "pareto":
        a = PARETO_SHAPE
        x_m = (a - 1.0) / a                       # mean a x_m / (a - 1) = 1
        spread = 1.0 / math.sqrt(a * (a - 2.0))   # CV of X
        x = x_m * (1.0 - rng.random((workers, per_worker))) ** (-1.0 / a)
        return 1.0 + (cv / spread) * (x - 1.0)
    sigma2 = math.log1p(cv * cv)
    return rng.lognormal(-sigma2 / 2, math.sqrt(sigma2), size=(workers, per_worker))


def _check_job(model_bytes, bandwidth, t_forward, t_backward, t_update, workers, batch_size):
    """The job's numbers in SI units, or SpecError naming the argument."""
    return dict(
        model_bytes=_v.number("model_bytes", model_bytes, "B", positive=True),
        bandwidth=_v.number("bandwidth", bandwidth, "B/s", positive=True),
        t_forward=_v.number("t_forward", t_forward, "s", minimum=0),
        t_backward=_v.number("t_backward", t_backward, "s", minimum=0),
        t_update=_v.number("t_update", t_update, "s", minimum=0),
        workers=_v.integer("workers", workers, minimum=1),
        batch_size=_v.integer("batch_size", batch_size, minimum=1))


def _check_options(mode, overlap, queue, loss_rate, update, compute_cv, chunks, scale, steps,
                   warmup, batches, delay, segment_size, min_rto, stop_time, n_ps=1,
                   tcp="newreno", buffer=None, jitter="lognormal", blocks=None,
                   ce_threshold=DCTCP_CE_THRESHOLD, delayed_ack_timeout=DELAYED_ACK_TIMEOUT):
    """The engine options, checked, or SpecError naming the argument."""
    if not isinstance(overlap, bool):
        raise SpecError("overlap", f"expected True or False, got {overlap!r}")
    queue = _v.choice("queue", queue, QUEUES)
    loss = _v.number("loss_rate", loss_rate, minimum=0)
    if loss >= 1:
        raise SpecError("loss_rate", f"must be < 1, got {loss_rate!r}")
    opts = dict(
        mode=_v.choice("mode", mode, ("sync", "async")), overlap=overlap,
        queue=queue, loss_rate=loss, n_ps=_v.integer("n_ps", n_ps, minimum=1),
        tcp=_v.choice("tcp", tcp, tuple(TCP_VARIANTS)),
        buffer=(DEFAULT_BUFFER[queue] if buffer is None
                else _v.integer("buffer", buffer, minimum=2)),
        jitter=_v.choice("jitter", jitter, JITTERS), blocks=_checked_blocks(blocks),
        update=_v.choice("update", update, ("per_step", "per_gradient")),
        compute_cv=_v.number("compute_cv", compute_cv, minimum=0),
        chunks=_v.integer("chunks", chunks, minimum=1),
        scale=_v.number("scale", scale, positive=True),
        steps=_v.integer("steps", steps, minimum=1),
        warmup=_v.integer("warmup", warmup, minimum=0),
        batches=_v.integer("batches", batches, minimum=1),
        delay=_v.number("delay", delay, "s", minimum=0),
        segment_size=_v.integer("segment_size", segment_size, minimum=64),
        min_rto=_v.number("min_rto", min_rto, "s", positive=True),
        stop_time=_v.number("stop_time", stop_time, "s", positive=True),
        ce_threshold=_v.number("ce_threshold", ce_threshold, "s", positive=True),
        delayed_ack_timeout=_v.number("delayed_ack_timeout", delayed_ack_timeout, "s",
                                      positive=True))
    if opts["steps"] < opts["batches"]:
        raise SpecError("steps", f"must be >= batches={opts['batches']}, got {steps!r}")
    return opts


def _checked_blocks(blocks) -> tuple | None:
    """Per-block (bytes, forward, backward) shares, each column summing to 1, or None."""
    if blocks is None:
        return None
    try:
        a = np.asarray(blocks, dtype=float)
    except (TypeError, ValueError):
        raise SpecError("blocks", "expected rows of (bytes, forward, backward) shares") from None
    if a.ndim != 2 or a.shape[1] != 3 or len(a) < 1:
        raise SpecError("blocks", f"expected rows of 3 shares, got shape {a.shape}")
    if not (np.isfinite(a).all() and (a >= 0).all()) or not np.allclose(a.sum(axis=0), 1.0):
        raise SpecError("blocks", "shares must be finite, >= 0, and each column must sum to 1")
    return tuple(tuple(float(x) for x in row) for row in a)


def block_bytes(total: float, shares) -> list[int]:
    """Whole bytes of each block: the floors of the cumulative shares, at least 1 each."""
    edges = np.floor(total * np.concatenate([[0.0], np.cumsum(shares)]))
    edges[-1] = math.floor(total)
    return [max(int(b - a), 1) for a, b in zip(edges[:-1], edges[1:])]


def simulate_ps_job_ns3(model_bytes, bandwidth, t_forward, t_backward, t_update, workers, *,
                        mode: str = "sync", overlap: bool = False, queue: str = "fair",
                        loss_rate=0.0, update: str = "per_step", compute_cv=0.0,
                        batch_size: int = 1, chunks: int = 4,
                        scale: float = DEFAULT_JOB_SCALE, steps: int = 20, warmup: int = 2,
                        batches: int = 5, seed=0, delay=10e-6, segment_size: int = 1448,
                        min_rto=1.0, stop_time=1e5, n_ps: int = 1, tcp: str = "newreno",
                        buffer: int | None = None, jitter: str = "lognormal",
                        blocks=None, ce_threshold=DCTCP_CE_THRESHOLD,
                        delayed_ack_timeout=DELAYED_ACK_TIMEOUT) -> Ns3JobResult:
    """Run one PS job (P servers, K workers, a star) in ns-3 with TCP; measure its speed.

    Parameters
    ----------
    model_bytes : float, bytes
        Model size M; gradients have the same size.
    bandwidth : float, bytes/s
        Line rate of every NIC link (before ``scale``).
    t_forward, t_backward : float, s
        Mean forward and backward time of one worker step.
    t_update : float, s
        PS update time, per step or per gradient (``update``).
    workers : int
        K >= 1.
    mode : {"sync", "async"}
        Barrier per step, or independent worker loops (module notes).
    overlap : bool
        Pull and push block by block, overlapped with forward and backward.
    queue : {"fair", "fifo"}
        Egress queue discipline on the NIC links.
    loss_rate : float
        Probability that a device drops a received packet, in [0, 1).
    update : {"per_step", "per_gradient"}
        When the PS pays ``t_update`` (async: always per gradient).
    compute_cv : float
        Coefficient of variation of the lognormal compute-time factor.
    batch_size : int, samples
        Samples per worker step (throughput in samples/s).
    chunks : int
        Blocks of the model when ``overlap`` (ignored otherwise).
    scale : float
        Divisor of bytes and link rates.
    steps, warmup : int
        Measured and discarded steps (sync) or gradients per worker (async).
    batches : int
        Batches of the measured window for ``throughput_std``.
    seed : int or numpy.random.SeedSequence
        Seeds the compute draws and ns-3's random streams (loss).
    delay : float, s
        Propagation delay of each link.
    segment_size : int, bytes
        TCP maximum segment size.
    min_rto : float, s
        TCP minimum retransmission timeout.
    stop_time : float, s
        Simulated-time safety stop.
    n_ps : int
        Parameter servers P: each holds an even share of every block, each
        worker exchanges it with each server over a TCP connection of its own,
        and each server updates its share on a CPU of its own
        (``t_update / P``).  The step ends when every server is done.
    tcp : str
        Congestion control, one of :data:`TCP_VARIANTS` ("newreno", "cubic",
        "dctcp", ...).  DCTCP gets ECN marking:
        RED at :data:`DCTCP_MARK_PACKETS` on a FIFO queue, a sojourn of
        :data:`DCTCP_CE_THRESHOLD` on a fair one.
    buffer : int or None, packets
        Capacity of every queue (None: :data:`DEFAULT_BUFFER` of ``queue``);
        a shallow buffer drops packets when many transfers meet.
    jitter : {"lognormal", "pareto", "none"}
        Distribution of the compute-time factor (mean 1, ``compute_cv``).
    blocks : sequence of (bytes, forward, backward) shares, optional
        With ``overlap``, the blocks' shares of the model bytes and of the
        forward and backward times (a per-layer profile grouped into blocks);
        None: ``chunks`` equal blocks.
    ce_threshold : float, s
        DCTCP on a fair queue: a packet is marked when it waited longer
        (default :data:`DCTCP_CE_THRESHOLD`).  Below the transmission time
        of one packet at the scaled rate (``1502 * 8 * scale / (8 *
        bandwidth)``) nearly every queued packet is marked and DCTCP runs the
        link well below its rate (docs/validation.md).
    delayed_ack_timeout : float, s
        How long a receiver holds the ACK of a lone segment (default
        :data:`DELAYED_ACK_TIMEOUT`, ns-3's 200 ms; Linux: 40 ms at least).

    Returns
    -------
    Ns3JobResult

    Raises
    ------
    ImportError
        ns-3 (``pip install 'perfmodel[ns3]'``) is not installed.
    SpecError
        Naming a bad argument.
    SimulationStalled
        The run hit ``stop_time`` before the measured window was complete.

    References
    ----------
    Li et al. 2022, Sec. 2.1 (async), eqs. 7-10 (sync); Jain, Kumar, Mao, Sec. 4.4
    (scaling).
    """
    job = _check_job(model_bytes, bandwidth, t_forward, t_backward, t_update, workers,
                     batch_size)
    o = _check_options(mode, overlap, queue, loss_rate, update, compute_cv, chunks, scale,
                       steps, warmup, batches, delay, segment_size, min_rto, stop_time, n_ps,
                       tcp, buffer, jitter, blocks, ce_threshold, delayed_ack_timeout)
    shares = o["blocks"] if o["overlap"] else None
    blocks = (len(shares) if shares is not None else o["chunks"]) if o["overlap"] else 1
    if job["model_bytes"] / o["scale"] < blocks:
        raise SpecError("scale", f"leaves less than one byte per block "
                                 f"({job['model_bytes'] / o['scale']!r} bytes)")
    k = job["workers"]
    per_step = 1 if o["mode"] == "sync" else k
    per_worker = 3 * (o["steps"] + o["warmup"]) + 10
    factors = _compute_factors(o["compute_cv"], k, per_worker, seed, o["jitter"])
    run_number = int(_v.seed_sequence(seed).generate_state(1)[0]) % (2**31 - 1) + 1
    r = _runtime().gbl.perfmodel_ns3job.JobRunner()
    r.workers, r.chunks, r.servers = k, blocks, o["n_ps"]
    if shares is not None:
        for col, vec in ((1, r.fwdShare), (2, r.bwdShare)):
            for row in shares:
                vec.push_back(row[col])
        for b in block_bytes(job["model_bytes"] / o["scale"], [row[0] for row in shares]):
            r.chunkBytes.push_back(float(b))
    r.tcp = TCP_VARIANTS[o["tcp"]]
    r.ecn = o["tcp"] == "dctcp"
    r.bufferPackets = o["buffer"]
    r.markPackets, r.ceThreshold = DCTCP_MARK_PACKETS, o["ce_threshold"]
    r.rate = job["bandwidth"] * 8.0 / o["scale"]
    r.delay = o["delay"]
    r.modelBytes = r.gradBytes = job["model_bytes"] / o["scale"]
    r.tForward, r.tBackward, r.tUpdate = job["t_forward"], job["t_backward"], job["t_update"]
    r.isAsync, r.perGradient = o["mode"] == "async", o["update"] == "per_gradient"
    r.queueKind, r.lossRate, r.minRto = int(o["queue"] == "fair"), o["loss_rate"], o["min_rto"]
    r.delAckTimeout = o["delayed_ack_timeout"]
    r.segmentSize, r.runNumber, r.stopTime = o["segment_size"], run_number, o["stop_time"]
    for x in factors.ravel():
        r.factors.push_back(float(x))
    r.perWorker = per_worker
    r.target = (o["warmup"] + o["steps"]) * per_step
    start = _time.perf_counter()
    r.Run()
    wall = _time.perf_counter() - start
    done = np.array(list(r.doneTime))
    who = np.array(list(r.doneWorker))
    if done.size < r.target:
        raise SimulationStalled(f"ns-3 stopped at stop_time={o['stop_time']} s after {done.size} "
                           f"of {r.target} steps")
    return _measure(done, who, job, o, wall, run_number,
                    {"queue_drops": int(r.queueDrops), "ecn_marks": int(r.ecnMarks)})


def _measure(done, who, job, o, wall, run_number, counters) -> Ns3JobResult:
    """Throughput over the window after warmup, batch-means spread, step times."""
    k, per_step = job["workers"], (1 if o["mode"] == "sync" else job["workers"])
    times = np.concatenate([[0.01], done])     # 0.01 s: the runner's start time
    first = o["warmup"] * per_step
    edges = np.linspace(first, first + o["steps"] * per_step, o["batches"] + 1).round()
    edges = edges.astype(int)
    steps_per_gradient = k if o["mode"] == "sync" else 1
    window = times[edges[-1]] - times[edges[0]]
    step_rate = (edges[-1] - edges[0]) * steps_per_gradient / window
    batch_rates = np.diff(edges) * steps_per_gradient / np.diff(times[edges])
    if o["mode"] == "sync":
        step_times = np.diff(times[first:])
    else:
        mine = [np.diff(done[first:][who[first:] == w]) for w in range(k)]
        step_times = np.concatenate(mine) if mine else np.array([])
    meta = dict(engine="ns3", ns3_version=ns3_version(), run_number=run_number,
                **{key: v for key, v in job.items()}, **o, **counters)
    b = job["batch_size"]
    return Ns3JobResult(float(step_rate * b), float(step_rate),
                        float(np.std(batch_rates * b, ddof=1)) if o["batches"] > 1 else 0.0,
                        step_times, wall, meta, _worker_ends(done, who, k, o["mode"]))


def _worker_ends(done, who, k: int, mode: str) -> np.ndarray:
    """(workers, steps) end times; async: each worker's first ``n`` gradients, ``n`` the
    fewest any worker completed."""
    if mode == "sync":
        return np.tile(done, (k, 1))
    mine = [done[who == w] for w in range(k)]
    n = min(len(m) for m in mine)
    return np.array([m[:n] for m in mine])


def ns3_version() -> str:
    """The installed ns-3 (PyPI `ns3`) version, or "unknown"."""
    try:
        return importlib.metadata.version("ns3")
    except importlib.metadata.PackageNotFoundError:  # pragma: no cover
        return "unknown"


#: Worker counts of the matrix.
MATRIX_WORKERS = (1, 2, 3, 4, 6, 8, 10, 12)
#: Scale of the matrix: at 1000, FIFO sharing of ~70-segment transfers turns FCFS-like
#: and clearly faster than at 100, while 100 and 30 agree closely (fair queues agree at
#: every scale).
MATRIX_SCALE = 100.0
#: Per-device packet loss of the lossy regimes: at scale 100 it slows a 4-worker sync
#: job markedly at 10 Gbps and little at 1 Gbps (1e-3 barely shows; 1e-2 dominates).
MATRIX_LOSS = 3e-3
#: Measured steps, warmup steps and batches (for throughput_std) per matrix run.
MATRIX_STEPS, MATRIX_WARMUP, MATRIX_BATCHES = 12, 2, 4
#: Measured gradients per worker in async runs: async completions come in convoys, so a
#: window of n gradients per worker has an edge error of up to about 1/n (12: ~8%).
MATRIX_ASYNC_STEPS = 40
#: Compute-time spread of the main regimes (lognormal coefficient of variation).
MATRIX_CV = 0.1
#: Seeds of the committed matrix; a regime runs the first :func:`seed_count`
#: of them (common random numbers across regimes).
MATRIX_SEEDS = tuple(range(9))
_GBPS = 1e9 / 8


def matrix_regimes(loss: float = MATRIX_LOSS, cv: float = MATRIX_CV) -> list[dict]:
    """The matrix's regimes: engine options per row group, each with a ``regime`` name.

    The full product queue x loss x bandwidth x mode x overlap (sync pays the
    update per step, async per gradient), then async lock-step probes
    (compute_cv 0.01 vs 0.2, loss-free, no overlap) and sync per-gradient updates.
    """
    out = []
    for queue in ("fifo", "fair"):
        for loss_rate in (0.0, loss):
            for bw in (1, 10):
                for mode in ("sync", "async"):
                    for overlap in (False, True):
                        out.append(dict(queue=queue, loss_rate=loss_rate, bandwidth=bw * _GBPS,
                                        mode=mode, overlap=overlap, compute_cv=cv,
                                        update="per_step" if mode == "sync" else "per_gradient"))
    for queue in ("fair", "fifo"):
        for bw in (1, 10):
            for probe_cv in (0.01, 0.2):
                out.append(dict(queue=queue, loss_rate=0.0, bandwidth=bw * _GBPS, mode="async",
                                overlap=False, compute_cv=probe_cv, update="per_gradient"))
    for bw in (1, 10):
        out.append(dict(queue="fair", loss_rate=0.0, bandwidth=bw * _GBPS, mode="sync",
                        overlap=False, compute_cv=cv, update="per_gradient"))
    for r in out:
        r["regime"] = _regime_name(r)
    return out


def _regime_name(r: dict) -> str:
    """A readable unique name, e.g. ``sync-fair-lossfree-10G-seq-per_step-cv0.1``."""
    return "-".join([r["mode"], r["queue"], "lossy" if r["loss_rate"] else "lossfree",
                     f"{r['bandwidth'] / _GBPS:g}G", "overlap" if r["overlap"] else "seq",
                     r["update"], f"cv{r['compute_cv']:g}"])


def seed_count(r: dict) -> int:
    """Seeded runs of a regime, enough for a standard error of a few percent at 1 worker.

    Sync loss-free runs are nearly deterministic: 1.  Async runs (convoys,
    drift; 40 gradients per worker): 3.  Sync lossy runs (12 steps, where an
    occasional 1 s timeout weighs heavily): 9.  Async lossy: 3.
    """
    if r["mode"] == "async":
        return 3
    return 9 if r["loss_rate"] > 0 else 1


def _regime_seeds(r: dict, seeds) -> tuple:
    """The seeds run for regime ``r``: the first :func:`seed_count` of ``seeds``."""
    return tuple(seeds)[:seed_count(r)]


def matrix_rows(profile: str = "resnet50-pipedream", *, t_update=DEFAULT_T_UPDATE,
                workers=MATRIX_WORKERS, regimes=None, scale: float = MATRIX_SCALE,
                steps: int = MATRIX_STEPS, warmup: int = MATRIX_WARMUP,
                batches: int = MATRIX_BATCHES, seed: int = 0,
                async_steps: int = MATRIX_ASYNC_STEPS, seeds=None):
    """Yield one list of CSV rows (dicts of :data:`MATRIX_COLUMNS`) per regime.

    Parameters
    ----------
    profile : str
        Zoo profile of the job (``perfmodel.zoo.profile``): model bytes,
        forward and backward times, batch size.
    t_update : float, s
        PS update time (per step in sync regimes, per gradient in async ones).
    workers : sequence of int
        Worker counts K of every regime.
    regimes : list of dict or None
        As :func:`matrix_regimes` returns; ``None``: all of them.
    scale, steps, warmup, batches, seed
        As for :func:`simulate_ps_job_ns3`; every run uses the same ``seed``
        (common random numbers across regimes).  ``steps`` is for sync regimes.
    async_steps : int
        Measured gradients per worker in async regimes.
    seeds : sequence of int or None
        Several seeds: each regime runs the first :func:`seed_count` of them;
        rows seed by seed.  None: ``(seed,)`` for every regime.

    Yields
    ------
    list of dict
        The rows of one regime, one per seed and worker count.
    """
    job = zoo.profile(profile)
    for r in (matrix_regimes() if regimes is None else regimes):
        rows = []
        n_steps = async_steps if r["mode"] == "async" else steps
        for run_seed, k in ((s_, k_) for s_ in _regime_seeds(r, seeds or (seed,))
                            for k_ in workers):
            res = simulate_ps_job_ns3(
                job.model_bytes, r["bandwidth"], job.t_forward, job.t_backward, t_update, k,
                mode=r["mode"], overlap=r["overlap"], queue=r["queue"],
                loss_rate=r["loss_rate"], update=r["update"], compute_cv=r["compute_cv"],
                batch_size=job.batch_size, scale=scale, steps=n_steps, warmup=warmup,
                batches=batches, seed=run_seed)
            rows.append(dict(regime=r["regime"], queue=r["queue"], loss_rate=r["loss_rate"],
                             bandwidth=r["bandwidth"], mode=r["mode"],
                             overlap=int(r["overlap"]), update=r["update"],
                             compute_cv=r["compute_cv"], workers=k, n_ps=1,
                             batch_size=job.batch_size, throughput=round(res.throughput, 6),
                             throughput_std=round(res.throughput_std, 6), steps=n_steps,
                             seed=run_seed, wall_seconds=round(res.wall_seconds, 3)))
        yield rows


def _header(profile, t_update, scale, steps, warmup, batches, seed, command, done, total,
            async_steps=MATRIX_ASYNC_STEPS, seeds=None):
    """The '#' comment lines of the matrix CSV."""
    job = zoo.profile(profile)
    status = "complete" if done == total else f"PARTIAL: {done} of {total} regimes so far"
    return [
        f"# perfmodel ns-3 validation matrix; {status}",
        f"# job: zoo:{profile} model_bytes={job.model_bytes:g} B t_forward={job.t_forward} s "
        f"t_backward={job.t_backward} s batch_size={job.batch_size}; t_update={t_update} s "
        "(ours: the profile has 0), one PS",
        f"# engine: perfmodel.placement.ns3_job.simulate_ps_job_ns3, ns-3 {ns3_version()} "
        f"(PyPI 'ns3'), TCP NewReno, MSS 1448 B, min RTO 1 s, star of 1 PS + K workers, "
        f"link delay 10 us, scale={scale:g} (bytes and rates divided), overlap in 4 blocks, "
        "one update CPU on the PS applying whole gradients first come first served",
        f"# measured: sync steps={steps} barrier steps, async steps={async_steps} gradients "
        f"per worker, after warmup={warmup}; throughput = samples/s summed over workers; throughput_std "
        f"= std (ddof 1) of the throughput over {batches} equal batches of the window "
        "(batch means)",
        "# loss_rate: per-packet drop probability on every device (~2x end to end); "
        "compute times: lognormal factor of mean 1, cv compute_cv; bandwidth in bytes/s",
        (f"# seed={seed} for every run (common random numbers)" if not seeds or len(seeds) < 2
         else f"# seeds: each regime runs the first 1 (sync loss-free), 3 (async) or 9 (sync "
              f"lossy) of {','.join(map(str, seeds))} (common random numbers across regimes), "
              "enough for a few percent of standard error; the matrix averages a "
              "configuration's seeds"),
        f"# regenerate: {command}",
    ]


def generate_matrix(out_path, *, profile: str = "resnet50-pipedream", t_update=DEFAULT_T_UPDATE,
                    workers=MATRIX_WORKERS, regimes=None, scale: float = MATRIX_SCALE,
                    steps: int = MATRIX_STEPS, warmup: int = MATRIX_WARMUP,
                    batches: int = MATRIX_BATCHES, seed: int = 0,
                    async_steps: int = MATRIX_ASYNC_STEPS,
                    command: str = "python -m perfmodel.placement.ns3_job --out FILE",
                    log=None, seeds=None) -> int:
    """Run the matrix and write the CSV to ``out_path``, rewritten after every regime.

    The file is replaced atomically after each regime, its first comment line
    saying ``PARTIAL: i of n regimes`` until the last one is done.

    Parameters
    ----------
    out_path : str or path
        CSV file to write.
    profile, t_update, workers, regimes, scale, steps, warmup, batches, seed, async_steps, seeds
        As for :func:`matrix_rows`.
    command : str
        The command line recorded in the header as the way to regenerate.
    log : callable or None
        Gets one progress line per regime.

    Returns
    -------
    int
        Number of data rows written.
    """
    import os

    regimes = matrix_regimes() if regimes is None else regimes
    rows: list[dict] = []
    started = _time.perf_counter()
    gen = matrix_rows(profile, t_update=t_update, workers=workers, regimes=regimes,
                      scale=scale, steps=steps, warmup=warmup, batches=batches, seed=seed,
                      async_steps=async_steps, seeds=seeds)
    for i, group in enumerate(gen, 1):
        rows.extend(group)
        tmp = f"{out_path}.tmp"
        with open(tmp, "w", newline="") as fh:
            for line in _header(profile, t_update, scale, steps, warmup, batches, seed,
                                command, i, len(regimes), async_steps, seeds):
                fh.write(line + "\n")
            writer = csv.DictWriter(fh, fieldnames=MATRIX_COLUMNS, lineterminator="\n")
            writer.writeheader()
            writer.writerows(rows)
        os.replace(tmp, out_path)
        if log is not None:
            log(f"{i}/{len(regimes)} {group[0]['regime']}: "
                f"{_time.perf_counter() - started:.0f} s elapsed")
    return len(rows)


def main(argv=None) -> int:
    """``python -m perfmodel.placement.ns3_job --out FILE``: write the matrix CSV."""
    p = argparse.ArgumentParser(prog="python -m perfmodel.placement.ns3_job",
                                description="packet-level ns-3 validation matrix (CSV)")
    p.add_argument("--out", required=True, help="CSV file to write")
    p.add_argument("--scale", type=float, default=MATRIX_SCALE)
    p.add_argument("--steps", type=int, default=MATRIX_STEPS, help="sync barrier steps measured")
    p.add_argument("--async-steps", type=int, default=MATRIX_ASYNC_STEPS,
                   help="async gradients per worker measured")
    p.add_argument("--warmup", type=int, default=MATRIX_WARMUP)
    p.add_argument("--seeds", default=",".join(map(str, MATRIX_SEEDS)),
                   help="comma-separated seeds; each regime runs the first 1 (sync loss-free), "
                        "3 (async) or 9 (sync lossy) of them (default: %(default)s)")
    p.add_argument("--workers", default=",".join(map(str, MATRIX_WORKERS)),
                   help="comma-separated worker counts")
    a = p.parse_args(argv)
    try:   # bad input first: it is wrong with or without ns-3
        workers = tuple(int(x) for x in a.workers.split(","))
    except ValueError:
        print(f"error: --workers: expected comma-separated integers, got {a.workers!r}",
              file=sys.stderr)
        return 2
    try:
        seeds = tuple(int(x) for x in a.seeds.split(","))
    except ValueError:
        print(f"error: --seeds: expected comma-separated integers, got {a.seeds!r}",
              file=sys.stderr)
        return 2
    if not available():
        print(f"error: {_ns3.INSTALL_HINT}", file=sys.stderr)
        return 2
    command = " ".join(["python -m perfmodel.placement.ns3_job"]
                       + (argv if argv is not None else sys.argv[1:]))
    try:
        n = generate_matrix(a.out, workers=workers, scale=a.scale, steps=a.steps,
                            warmup=a.warmup, seed=seeds[0], seeds=seeds,
                            async_steps=a.async_steps,
                            command=command,
                            log=lambda s: print(s, flush=True))
    except SpecError as err:
        print(f"error: --{err.field}: {err.message}", file=sys.stderr)
        return 2
    print(f"wrote {n} rows to {a.out}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
