"""Test settings: hypothesis draws its examples deterministically (derandomize), so a CI run
on a clean clone is reproducible; ``HYPOTHESIS_PROFILE=explore pytest`` draws fresh random
examples to hunt for new failures."""

import os

from hypothesis import settings

settings.register_profile("default", derandomize=True)
settings.register_profile("explore", derandomize=False)
settings.load_profile(os.environ.get("HYPOTHESIS_PROFILE", "default"))
