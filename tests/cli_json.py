"""Reading the commands' JSON in tests."""

import json


def records_or_json(text: str):
    """A command's JSON; a predict/simulate envelope gives its records (tested on its own)."""
    data = json.loads(text)
    if isinstance(data, dict) and {"command", "records"} <= set(data):
        return data["records"]
    return data
