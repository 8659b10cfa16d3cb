"""Search MNIST shapes within what Yan et al. 2015 state, and score each against Table 1.

The paper gives only "about 2.5 million connections in 5 layers: 2 convolutional
layers, 2 linear layers, and a 10-way softmax".  This script tries LeNet-like
shapes (5x5 convolutions with 2x2 pooling, two fully connected layers) whose
connections are within 6% of 2.5 M, and prints for the best ones: the Spearman
correlation of Table 1 (each configuration at its default plan), the optimizer's
best within 4 workers per replica, and Fig. 8's speedups (1, 2, 4 workers,
replicas, servers), which the shape was not chosen on.

    python docs/table1_shapes.py      # about 30 s
"""

import itertools

from scipy.stats import spearmanr

import optimizer.dp as dp
from perfmodel import zoo
from perfmodel.layerwise import LayerWise
from perfmodel.specs import Config
from perfmodel.zoo._build import Net, conv, fc, softmax

MEASURED = ("2/9/2", "2/8/4", "2/6/8", "4/4/4", "1/19/1", "1/18/2", "1/16/4", "1/12/8")
CLUSTER, MODEL = zoo.cluster("yan2015"), LayerWise()


def build(c1, c2, f1, f2):
    net = Net((1, 28, 28))
    conv(net, "conv1", c1, 5, pool_size=2)
    conv(net, "conv2", c2, 5, pool_size=2)
    fc(net, "fc1", f1)
    fc(net, "fc2", f2)
    softmax(net, "softmax", 10)
    return net.dnn("mnist-variant", "", "", max_workers_per_replica=4)


def config(text, samples=60_000):
    w, r, s = map(int, text.split("/"))
    return Config(n_workers=w, n_replicas=r, n_ps=s, epoch_samples=samples)


def speedups(dnn, mode):
    times = [MODEL.estimate(dnn, CLUSTER, config({"W": f"{d}/4/4", "R": f"4/{d}/4",
                                                  "PS": f"4/4/{d}"}[mode], 1000)).epoch_time
             for d in (1, 2, 4)]
    return [round(times[0] / t, 2) for t in times]


rows = []
for c1, c2, f1, f2 in itertools.product((16, 20, 24), (40, 50, 56, 64), (150, 200, 250, 300),
                                        (600, 800, 1000, 1200)):
    dnn = build(c1, c2, f1, f2)
    if not 2.35e6 <= dnn.n_connections <= 2.65e6:
        continue
    t = {c: MODEL.estimate(dnn, CLUSTER, config(c)).epoch_time for c in MEASURED}
    rho = spearmanr(range(8), [t[c] for c in MEASURED]).statistic
    rows.append((round(float(rho), 3), (c1, c2, f1, f2), dnn))
rows.sort(key=lambda r: -r[0])
print(f"{len(rows)} shapes within 6% of 2.5 M connections; the best by Table 1:")
for rho, shape, dnn in rows[:5]:
    best = dp.optimize(LayerWise(working_set="layer"), dnn, CLUSTER, epoch_samples=60_000,
                       top=1, check_limit=False).best.config
    print(f"conv {shape[0]}/{shape[1]} fc {shape[2]}-{shape[3]}: {dnn.n_connections:,} "
          f"connections, Spearman {rho}, optimizer best {best.n_workers}/{best.n_replicas}/"
          f"{best.n_ps}; Fig. 8 speedups W {speedups(dnn, 'W')} R {speedups(dnn, 'R')} "
          f"PS {speedups(dnn, 'PS')}")
