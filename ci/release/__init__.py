"""The release room: package, scan and publish the chart (chart, checkov), and name the model-fetch image.

One way in: `python -m ci.release <verb>` (its __main__ lists the verbs). It imports nothing of the other rooms.
"""
from ci import REPO  # noqa: F401  (the room's modules read it from here)
