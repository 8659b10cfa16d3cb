"""Zoo data: measured PipeDream profiles, clusters and the provenance of copied files."""

from __future__ import annotations

import hashlib
import json
import re
from pathlib import Path

import jsonschema
import pytest

from perfmodel import zoo
from perfmodel.errors import SpecError
from perfmodel.pipedream import COMMIT, REPOSITORY
from perfmodel.specs import Cluster, Profile
from perfmodel.zoo import _profiles

ZOO = Path(zoo.__file__).parent
GRAPHS = ZOO / "pipedream"
PROVENANCE = GRAPHS / "PROVENANCE.md"

STEMS = ["alexnet", "densenet121", "gnmt", "gnmt_large", "inception_v3", "nasnetalarge",
         "nasnetamobile", "resnet101", "resnet18", "resnet50", "resnext101", "resnext50",
         "squeezenet1_0", "vgg16"]
BATCH = {"alexnet": 256, "densenet121": 64, "gnmt": 32, "gnmt_large": 128,
         "inception_v3": 128, "nasnetalarge": 16, "nasnetamobile": 128, "resnet101": 64,
         "resnet18": 256, "resnet50": 128, "resnext101": 64, "resnext50": 128,
         "squeezenet1_0": 256, "vgg16": 128}
DNN = {"alexnet": "alexnet", "vgg16": "vgg16", "resnet50": "resnet50",
       "inception_v3": "inception_v3"}
#: torchvision parameter counts (inception_v3 with its AuxLogits branch).
TORCHVISION_PARAMS = {"alexnet": 61100840, "vgg16": 138357544, "resnet18": 11689512,
                      "resnet50": 25557032, "resnet101": 44549160, "densenet121": 7978856,
                      "squeezenet1_0": 1248424, "resnext50": 25028904,
                      "inception_v3": 27161264}
PROFILES = [f"{stem}-pipedream" for stem in STEMS]
CLUSTERS = ["adam-20", "aws-g4dn.4xlarge", "aws-p3.16xlarge", "aws-p3.2xlarge", "cloudlab-d430"]


# --------------------------------------------------------------------- profiles

def test_profile_names():
    assert set(PROFILES) <= set(zoo.profile_names())
    assert [n for n in zoo.profile_names() if n.endswith("-pipedream")] == sorted(PROFILES)


@pytest.mark.parametrize("name", PROFILES)
def test_profile_loads_and_validates(name):
    raw = json.loads((ZOO / "profiles" / f"{name}.json").read_text(encoding="utf-8"))
    jsonschema.validate(raw, Profile.json_schema())
    p = zoo.profile(name)
    stem = name.removesuffix("-pipedream")
    assert p.name == name and p.measured is True and p.t_update == 0.0
    assert p.batch_size == BATCH[stem]
    assert p.dnn == DNN.get(stem, "")
    assert p.t_forward > 0 and p.t_backward > 0 and p.model_bytes > 0
    for text in (REPOSITORY, COMMIT, f"perfmodel/zoo/pipedream/{stem}.txt",
                 _profiles.upstream_path(stem), "t_update = 0", "MIT",
                 f"batch_size {BATCH[stem]} inferred"):
        assert text in p.source, text


@pytest.mark.parametrize("stem", sorted(TORCHVISION_PARAMS))
def test_parameter_bytes_match_torchvision(stem):
    assert zoo.profile(f"{stem}-pipedream").model_bytes == 4 * TORCHVISION_PARAMS[stem]


@pytest.mark.parametrize("stem", sorted(DNN))
def test_profile_matches_zoo_dnn(stem):
    name = DNN[stem]
    assert zoo.profile(f"{stem}-pipedream").model_bytes == zoo.load(name).model_bytes()


def test_resnet50_numbers():
    p = zoo.profile("resnet50-pipedream")
    assert p.model_bytes == 102228128.0
    assert p.t_forward == pytest.approx(0.182488, rel=1e-12)
    assert p.t_backward == pytest.approx(0.260931, rel=1e-12)


def test_builder_reproduces_committed_json():
    assert _profiles.stale() == []
    for path, text in _profiles.expected_files().items():
        assert path.read_text(encoding="utf-8") == text
    assert _profiles.main(["--check"]) == 0


def test_unknown_profile_is_a_spec_error():
    with pytest.raises(SpecError, match="no profile called"):
        zoo.profile("nope-pipedream")


# --------------------------------------------------------------------- clusters

@pytest.mark.parametrize("name", CLUSTERS)
def test_cluster_loads_and_validates(name):
    raw = json.loads((ZOO / "clusters" / f"{name}.json").read_text(encoding="utf-8"))
    jsonschema.validate(raw, Cluster.json_schema())
    c = zoo.cluster(name)
    # Every zoo cluster cites its paper by authors and year.
    assert c.name == name and ("Li et al. 2022" in c.source or "Yan et al. 2015" in c.source)
    assert "Seed" not in c.source
    assert Cluster.from_dict(c.to_dict()) == c


def test_cluster_values():
    p3 = zoo.cluster("aws-p3.2xlarge")
    assert (p3.nic_bandwidth, p3.gpus_per_machine, p3.cores) == (1.25e9, 1, 8)
    big = zoo.cluster("aws-p3.16xlarge")
    assert (big.nic_bandwidth, big.per_flow_cap, big.gpus_per_machine) == (3.125e9, 1.25e9, 8)
    assert big.intra_bandwidth == 150e9 and big.cores == 64
    assert "assumption" in big.source.lower()
    d430 = zoo.cluster("cloudlab-d430")
    assert (d430.nic_bandwidth, d430.cores) == (1.25e8, 8)
    adam = zoo.cluster("adam-20")
    assert (adam.machines, adam.cores, adam.nic_bandwidth) == (20, 16, 1.25e9)
    g4 = zoo.cluster("aws-g4dn.4xlarge")
    assert (g4.nic_bandwidth, g4.cores) == (1.25e9, 16)


# --------------------------------------------------------------------- provenance

def _recorded_hashes() -> dict[str, str]:
    text = PROVENANCE.read_text(encoding="utf-8")
    rows = re.findall(r"^\| `([\w.]+\.txt)` \|.*\| `([0-9a-f]{64})` \|$", text, flags=re.M)
    return dict(rows)


def test_provenance_lists_every_file_with_its_hash():
    recorded = _recorded_hashes()
    assert sorted(recorded) == [f"{s}.txt" for s in STEMS]
    assert sorted(p.name for p in GRAPHS.glob("*.txt")) == sorted(recorded)


@pytest.mark.parametrize("stem", STEMS)
def test_copied_file_is_byte_identical(stem):
    digest = hashlib.sha256((GRAPHS / f"{stem}.txt").read_bytes()).hexdigest()
    assert digest == _recorded_hashes()[f"{stem}.txt"]


def test_provenance_names_source_and_licence():
    text = PROVENANCE.read_text(encoding="utf-8")
    for words in (REPOSITORY, COMMIT, "MIT", "profiler/image_classification/profiles",
                  "profiler/translation/profiles"):
        assert words in text


def test_my_code_never_reads_shared():
    for path in (ZOO.parent / "pipedream.py", ZOO / "_profiles.py"):
        assert "shared" not in path.read_text(encoding="utf-8")
