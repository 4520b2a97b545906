"""What tools/plan.py and tools/predict.py share, and what tests/ builds on: values as Helm merges them
(values.py), the chart rendered with Helm's own engine (render.py), the manifests in `helm template`'s order
(manifests.py), the rendered objects read back (objects.py) and Helm's command-line options (cli.py).

It needs only PyYAML and helm-python-sdk (requirements-test.txt), and never imports from tests/.
"""
