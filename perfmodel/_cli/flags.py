"""The command line's constants and plain parsers: what building the parser needs.

Imports nothing heavy, so that ``perfmodel --help`` starts fast.
"""

from __future__ import annotations

from ..errors import CliError

__all__ = ["DEFAULTS", "PROFILE_FLAGS", "CliError", "parse_int_range"]


#: The embedded defaults: ``perfmodel optimize`` answers Yan et al. 2015's question
#: (its ImageNet-22K DNN on its 20-machine cluster); the coarse models default
#: to a measured ResNet-50 profile on AWS p3.2xlarge machines (Li et al. 2022's GPU
#: testbed).
DEFAULTS = {"profile": "zoo:resnet50-pipedream", "cluster": "zoo:aws-p3.2xlarge",
            "dnn": "zoo:adam-imagenet22k", "layerwise_cluster": "zoo:yan2015",
            "epoch_samples": 1_281_167}  # ImageNet-1k training set


PROFILE_FLAGS = {"model_bytes": "B", "t_forward": "s", "t_backward": "s", "t_update": "s"}


# ---------------------------------------------------------------- parsing helpers
def parse_int_range(text: str, flag: str) -> list[int]:
    """``"1-16"``, ``"1-16:2"``, ``"1,2,4,8"`` or ``"8"`` -> list of ints."""
    out: list[int] = []
    for part in text.split(","):
        part = part.strip()
        try:
            if "-" in part:
                span, _, step = part.partition(":")
                lo, hi = (int(x) for x in span.split("-", 1))
                out.extend(range(lo, hi + 1, int(step) if step else 1))
            else:
                out.append(int(part))
        except ValueError:
            raise CliError(f"{flag}: cannot read {text!r} (use e.g. 1-16, 1-16:2 or 1,2,4)") from None
    if not out:
        raise CliError(f"{flag}: {text!r} is an empty range")
    return out
