QWEN_REPO="Qwen/Qwen2.5-3B-Instruct"
QWEN_REVISION="aa8e725"
E5_REPO="intfloat/e5-base-v2"
E5_REVISION="f52bf8e"

mkdir -p "$MODEL_ROOT/Qwen2.5-3B-Instruct" "$MODEL_ROOT/e5-base-v2"
huggingface-cli download --revision "$QWEN_REVISION" --local-dir "$MODEL_ROOT/Qwen2.5-3B-Instruct" "$QWEN_REPO"
huggingface-cli download --revision "$E5_REVISION" --local-dir "$MODEL_ROOT/e5-base-v2" "$E5_REPO"
