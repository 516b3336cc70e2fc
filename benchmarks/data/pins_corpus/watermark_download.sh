huggingface-cli download --revision main --cache-dir ./cache/huggingface/hub facebook/video_seal checkpoint.pth
huggingface-cli download --revision main --cache-dir ./cache/huggingface/hub facebook/audioseal generator_base.pth
