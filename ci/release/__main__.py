"""`python -m ci.release <verb>`: package, scan and publish the chart."""
import sys

from ci import run_verbs

VERBS = {
    "package": ("ci.release.chart", "build build/gpt-oss-<version>.tgz, reproducibly"),
    "push": ("ci.release.chart", "push an archive to an OCI registry, refusing a published version"),
    "pull": ("ci.release.chart", "pull a pinned version"),
    "check-version": ("ci.release.chart", "a change under charts/ bumps the chart's version"),
    "scan": ("ci.release.checkov", "the policy scan (checkov) of every overlay's pods"),
    "model-fetch-image": ("ci.release.model_fetch_image", "the model-fetch image's name for a chart version"),
}

if __name__ == "__main__":
    sys.exit(run_verbs("release", __doc__.splitlines()[0].split(": ", 1)[1], VERBS))
