#!/bin/sh
# python3 of the Dynamo runtime stand-in image (python -m ci.cluster node-images puts it first on PATH, at /usr/local/bin/python3).
# The pods the Dynamo operator makes run `python3 -m dynamo.trtllm ...` and `python3 -m dynamo.frontend ...`: those two
# go through ci/cluster/stand_in.py (a GPU-free mocker for the engine; the real frontend with the model's tokenizer
# in its offline Hugging Face cache). Everything else is Debian's python3, unchanged.
case "$1 $2" in
  "-m dynamo.trtllm" | "-m dynamo.frontend")
    module=$2
    shift 2
    exec /usr/bin/python3 /usr/local/bin/gpt-oss-stand-in "$module" "$@" ;;
esac
exec /usr/bin/python3 "$@"
