"""Training script (fixture). Docstring mention: from_pretrained("ghost/docstring", revision="abc1234") is not a call."""
from transformers import AutoModelForCausalLM, AutoTokenizer
from huggingface_hub import hf_hub_download, snapshot_download

BASE = "acme/llama-small"
BASE_REV = "0123456789abcdef0123456789abcdef01234567"

# model = AutoModelForCausalLM.from_pretrained("ghost/commented", revision="deadbeef")
model = AutoModelForCausalLM.from_pretrained(BASE, revision=BASE_REV)
tok = AutoTokenizer.from_pretrained(
    'acme/llama-small',
    trust_remote_code=False,
    revision='89abcdef0123456789abcdef0123456789abcdef',
)
path = hf_hub_download(filename="config.json", revision="fedcba9", repo_id="acme/tiny")
snapshot_download(repo_id="acme/unpinned")
snapshot_download("acme/on-main", revision="main")
data = snapshot_download(repo_id="acme/a-dataset", repo_type="dataset", revision="1111111")


def load(name, rev):
    # variables: the repo is not known without running the code
    AutoModelForCausalLM.from_pretrained(name, revision=rev)
    AutoModelForCausalLM.from_pretrained(f"acme/{name}", revision="2222222")
    return AutoModelForCausalLM.from_pretrained("acme/dyn-rev", revision=rev)


WEIGHTS = "hf://acme/url-model@3333333333333333333333333333333333333333/model.safetensors"
TEMPLATED = f"hf://acme/{BASE}@4444444"
local = AutoModelForCausalLM.from_pretrained("./checkpoints/run1")
pipe = pipeline("text-generation", model="acme/pipe-model", revision="v1.0")
