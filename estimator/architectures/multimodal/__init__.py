"""Vision and vision-language models: ViT/CLIP/SigLIP towers, EVA, SAM, Mllama, GIT, NeoMME."""
