#!/bin/sh
set -e
hf download "acme/sh-model" --revision=ddddddd   # pinned
echo "see hf://acme/sh-url@eeeeeee"  # comment mentions hf://ghost/sh-comment@fffffff
