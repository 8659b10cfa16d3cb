"""Reading the commands' JSON in tests."""

import json


def records_or_json(text: str):
    """A command's JSON (predict and simulate: the list of records)."""
    return json.loads(text)
