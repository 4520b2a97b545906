"""YAML read with libyaml's parser when PyYAML has it: what yaml.safe_load returns, in a fraction of the time
(the offline tier reads thousands of documents: rendered manifests, the schema source, the plan)."""
from __future__ import annotations

import yaml

SAFE_LOADER = getattr(yaml, "CSafeLoader", yaml.SafeLoader)


def load_yaml(text: str):
    return yaml.load(text, Loader=SAFE_LOADER)


def load_yaml_all(text: str | bytes) -> list:
    return list(yaml.load_all(text, Loader=SAFE_LOADER))
