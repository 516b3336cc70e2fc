"""Measure real training steps on CPU (transformers + peft, random weights) and compare with the estimate.

Run: `python -m benchmarks.memory_measure_cpu` (needs the optional `bench` extra: torch, transformers,
peft). For each small real-architecture model and recipe it runs two training steps and records,
during the second one, the peak of live tensor bytes: a TorchDispatchMode sees every tensor an op
creates and follows its storage until the storage is freed. It also adds up the storages autograd
saves for backward (split into logits-sized ones and the rest). The estimate is computed from the
model's config through `hubwatch.estimator.analyze` and compared term by term.

CPU differs from CUDA in kernels, not in what autograd keeps: SDPA's CPU flash kernel saves the same
q, k, v, output and log-sum-exp. QLoRA cases use bitsandbytes' CPU backend (NF4 with double
quantisation on the blocks' linears, PEFT adapters on top), when bitsandbytes is installed.
Results go to benchmarks/results/memory_measure_cpu.md.
"""

from __future__ import annotations

import gc
import weakref
from dataclasses import dataclass
from pathlib import Path
from typing import Any

RESULTS = Path(__file__).parent / "results" / "memory_measure_cpu.md"


@dataclass(frozen=True)
class Case:
    name: str
    arch: str  # "llama" or "gpt2"
    method: str  # "full" or "lora"
    precision: str  # "bf16", "amp-bf16", "fp32"
    targets: tuple[str, ...] = ("all-linear",)
    batch: int = 2
    seq_len: int = 256
    checkpointing: bool = False


# LoRA precision: amp-bf16 = PEFT's default fp32 adapters on the bf16 base under bf16 autocast (the
# transformers Trainer with bf16=True); fp32 = the same adapters without autocast; bf16 = bf16 adapters.
CASES = (
    Case("llama full bf16", "llama", "full", "bf16"),
    Case("llama full amp-bf16", "llama", "full", "amp-bf16"),
    Case("llama full fp32", "llama", "full", "fp32"),
    Case("llama full bf16 + ckpt", "llama", "full", "bf16", checkpointing=True),
    Case("llama LoRA all-linear amp-bf16", "llama", "lora", "amp-bf16"),
    Case("llama LoRA all-linear fp32 adapters, no autocast", "llama", "lora", "fp32"),
    Case("llama LoRA all-linear (bf16 adapters)", "llama", "lora", "bf16"),
    Case("llama LoRA q,v amp-bf16", "llama", "lora", "amp-bf16", targets=("q_proj", "v_proj")),
    Case("llama LoRA q,v (bf16 adapters)", "llama", "lora", "bf16", targets=("q_proj", "v_proj")),
    Case("llama LoRA all-linear b4 seq512", "llama", "lora", "amp-bf16", batch=4, seq_len=512),
    Case("llama LoRA all-linear + ckpt", "llama", "lora", "amp-bf16", checkpointing=True),
    Case("llama QLoRA all-linear amp-bf16", "llama", "qlora", "amp-bf16"),
    Case("llama QLoRA q,v amp-bf16", "llama", "qlora", "amp-bf16", targets=("q_proj", "v_proj")),
    Case("llama QLoRA all-linear (bf16 adapters)", "llama", "qlora", "bf16"),
    Case("gpt2 full bf16", "gpt2", "full", "bf16"),
    Case("gpt2 full amp-bf16", "gpt2", "full", "amp-bf16"),
    Case("gpt2 LoRA c_attn amp-bf16", "gpt2", "lora", "amp-bf16", targets=("c_attn",)),
)


def _config(arch: str) -> dict[str, Any]:
    from transformers import GPT2Config, LlamaConfig

    if arch == "llama":
        cfg = LlamaConfig(hidden_size=512, intermediate_size=1376, num_hidden_layers=4, num_attention_heads=8,
                          num_key_value_heads=2, vocab_size=8000, max_position_embeddings=1024,
                          tie_word_embeddings=False)
    else:
        cfg = GPT2Config(n_embd=512, n_layer=4, n_head=8, vocab_size=8000, n_positions=1024,
                         attn_pdrop=0.0, resid_pdrop=0.0, embd_pdrop=0.0)
    data = cfg.to_dict()
    data["architectures"] = ["LlamaForCausalLM" if arch == "llama" else "GPT2LMHeadModel"]
    return data


class LiveBytes:
    """A dispatch mode that follows every storage ops create, counting bytes alive and the peak."""

    def __init__(self) -> None:
        from torch.utils._python_dispatch import TorchDispatchMode

        tracker = self

        class Mode(TorchDispatchMode):
            def __torch_dispatch__(self, func, types, args=(), kwargs=None):  # type: ignore[no-untyped-def]
                out = func(*args, **(kwargs or {}))
                tracker.track_tree(out)
                return out

        self.mode = Mode()
        self.live: dict[int, int] = {}
        self.current = 0
        self.peak = 0
        self.phase = ""
        self.peak_phase = ""

    def track(self, t: Any) -> None:
        import torch

        if not isinstance(t, torch.Tensor) or t.device.type != "cpu":
            return
        st = t.untyped_storage()
        key = st._cdata
        if key in self.live:
            return
        n = st.nbytes()
        self.live[key] = n
        self.current += n
        weakref.finalize(st, self._free, key)
        if self.current > self.peak:
            self.peak, self.peak_phase = self.current, self.phase

    def _free(self, key: int) -> None:
        self.current -= self.live.pop(key, 0)

    def track_tree(self, out: Any) -> None:
        from torch.utils._pytree import tree_flatten

        for t in tree_flatten(out)[0]:
            self.track(t)

    def reset_peak(self) -> None:
        self.peak, self.peak_phase = self.current, self.phase


def _quantize_nf4(model: Any) -> None:
    """Replace the blocks' linear layers by bitsandbytes NF4 layers (double quantisation), as QLoRA does."""
    import bitsandbytes as bnb
    import torch

    for parent in list(model.modules()):
        for name, child in list(parent.named_children()):
            if isinstance(child, torch.nn.Linear) and name != "lm_head":
                q = bnb.nn.Linear4bit(child.in_features, child.out_features, bias=child.bias is not None,
                                      compute_dtype=torch.bfloat16, quant_type="nf4", compress_statistics=True)
                q.weight = bnb.nn.Params4bit(child.weight.data, requires_grad=False, quant_type="nf4",
                                             compress_statistics=True)
                if child.bias is not None:
                    q.bias = child.bias
                setattr(parent, name, q.to("cpu"))


def _quant_state_storages(model: Any) -> dict[int, int]:
    """Storages of bitsandbytes quantisation constants (absmax, nested absmax, code tables)."""
    import torch

    out: dict[int, int] = {}

    def add(t: Any) -> None:
        if isinstance(t, torch.Tensor):
            out[t.untyped_storage()._cdata] = t.untyped_storage().nbytes()

    for module in model.modules():
        state = getattr(getattr(module, "weight", None), "quant_state", None)
        if state is None:
            continue
        add(state.absmax)
        add(getattr(state, "code", None))
        nested = getattr(state, "state2", None)
        if nested is not None:
            add(nested.absmax)
            add(getattr(nested, "code", None))
    return out


def _from_parameter(t: Any) -> bool:
    """A tensor made from a parameter by casts, views or transposes only (no activation involved)."""
    fn = t.grad_fn
    for _ in range(4):
        if fn is None:
            return False
        if fn.name() == "torch::autograd::AccumulateGrad":
            return True
        nexts = [f for f, _ in fn.next_functions if f is not None]
        if len(nexts) != 1 or fn.name() not in ("TBackward0", "ToCopyBackward0", "ViewBackward0",
                                                 "TransposeBackward0", "PermuteBackward0"):
            return False
        fn = nexts[0]
    return False


def _measure(case: Case) -> dict[str, float | str]:
    import torch
    from transformers import AutoModelForCausalLM

    torch.manual_seed(0)
    config = _config(case.arch)
    from transformers import AutoConfig

    cfg = AutoConfig.for_model(**{k: v for k, v in config.items() if k not in ("architectures",)})
    cfg._attn_implementation = "sdpa"
    model_dtype = torch.bfloat16 if case.precision == "bf16" or case.method != "full" else torch.float32
    model = AutoModelForCausalLM.from_config(cfg, dtype=model_dtype)
    if case.method == "qlora":
        _quantize_nf4(model)
    if case.method in ("lora", "qlora"):
        from peft import LoraConfig, get_peft_model

        targets: Any = "all-linear" if case.targets == ("all-linear",) else list(case.targets)
        model = get_peft_model(model, LoraConfig(r=16, lora_alpha=16, lora_dropout=0.0, target_modules=targets),
                               autocast_adapter_dtype=case.precision != "bf16")
    if case.checkpointing:
        model.gradient_checkpointing_enable(gradient_checkpointing_kwargs={"use_reentrant": False})
        if case.method == "lora":
            model.enable_input_require_grads()
    model.train()
    params = [p for p in model.parameters() if p.requires_grad]
    optim = torch.optim.AdamW(params, lr=1e-4, fused=True)
    ids = torch.randint(0, 8000, (case.batch, case.seq_len))
    autocast = case.precision == "amp-bf16"
    tracker = LiveBytes()
    saved: dict[int, int] = {}
    logits_saved: dict[int, int] = {}
    weight_copies: dict[int, int] = {}
    logit_bytes = case.batch * case.seq_len * 8000

    weight_storages = {p.untyped_storage()._cdata: p.untyped_storage().nbytes() for p in model.parameters()}
    weight_storages.update(_quant_state_storages(model))
    weights = sum(weight_storages.values())
    weight_keys = set(weight_storages)

    def pack(t: Any) -> Any:
        st = t.untyped_storage()
        if st._cdata in weight_keys:
            return t  # the weight itself (or a view of it): counted as weights
        if _from_parameter(t):
            bucket = weight_copies  # autocast's bf16 copy of a weight (or its transpose)
        elif st.nbytes() >= 2 * logit_bytes * 0.99:
            bucket = logits_saved
        else:
            bucket = saved
        bucket.setdefault(st._cdata, st.nbytes())
        return t


    def step(measure: bool) -> None:
        tracker.phase = "forward"
        if measure:
            ctx = torch.autograd.graph.saved_tensors_hooks(pack, lambda t: t)
        else:
            import contextlib

            ctx = contextlib.nullcontext()
        with ctx, torch.autocast("cpu", dtype=torch.bfloat16, enabled=autocast):
            loss = model(input_ids=ids, labels=ids).loss
        tracker.phase = "backward"
        loss.backward()
        del loss
        tracker.phase = "step"
        optim.step()
        optim.zero_grad(set_to_none=True)

    step(False)
    gc.collect()
    states = sum(v.untyped_storage().nbytes() for s in optim.state.values() for v in s.values()
                 if isinstance(v, torch.Tensor) and v.dim() > 0)
    with tracker.mode:
        for t in list(model.parameters()) + list(model.buffers()):
            tracker.track(t)
        for s in optim.state.values():
            for v in s.values():
                tracker.track(v)
        tracker.reset_peak()
        step(True)
    for key in weight_keys:
        saved.pop(key, None)
    return {
        "weights": float(weights), "states": float(states), "saved": float(sum(saved.values())),
        "logits": float(sum(logits_saved.values())), "peak": float(tracker.peak), "phase": tracker.peak_phase,
        "copies": float(sum(weight_copies.values())),
    }


def _estimate(case: Case) -> dict[str, float | str]:
    from hubwatch.estimator import analyze
    from hubwatch.estimator.memory.peak import estimate_memory
    from hubwatch.estimator.memory.settings import MemorySettings

    spec = analyze(_config(case.arch)).spec
    settings = MemorySettings(method=case.method, precision=case.precision, batch=case.batch, seq_len=case.seq_len,
                              lora_rank=16, lora_targets=case.targets, grad_checkpointing=case.checkpointing)
    est = estimate_memory(spec, settings)
    moments = dict(est.moments)
    return {
        "weights": est.term("weights"),
        "copies": dict(est.terms).get("autocast_weight_copies", 0.0) if est.moment != "optimizer step" else 0.0,
        "states": est.term("optimizer_states"),
        "saved": _kept_activations(spec, settings),
        "peak": est.peak_bytes,
        "phase": est.moment,
        "moments": ", ".join(f"{k} {v / 1e6:.1f}" for k, v in moments.items()),
    }


def _kept_activations(spec: Any, settings: Any) -> float:
    from hubwatch.estimator.memory.activations import LoraActivations, activation_model

    lora = None
    if settings.method in ("lora", "qlora"):
        from hubwatch.estimator.memory.roles import plan_lora

        plan = plan_lora(spec, settings.lora_rank, settings.lora_targets)
        act_bytes = 4 if settings.precision == "fp32" else 2
        lora = {s.stack: LoraActivations(s.roles, s.rank_outputs_per_token, s.adapted_inputs_per_token, act_bytes,
                                         settings.precision != "bf16") for s in plan.stacks}
    full = settings.method == "full"
    compute = 4 if settings.precision == "fp32" and full else 2
    act = activation_model(spec, compute_bytes=compute, amp=settings.precision == "amp-bf16" and full,
                           seq_len=settings.seq_len, eager=False, lora=lora,
                           quantized_base=settings.method == "qlora" and settings.nf4_keeps_inputs)
    per = act.checkpointed_per_token if settings.effective_checkpointing else act.saved_per_token
    return per * settings.batch * settings.seq_len


def _pct(est: float, real: float) -> str:
    return "—" if real == 0 else f"{(est - real) / real * 100:+.0f}%"


def main() -> int:
    from benchmarks.bench_extra import missing_bench_extra

    if (status := missing_bench_extra("memory_measure_cpu", "torch", "transformers", "peft")) is not None:
        return status
    import torch
    import transformers
    from rich.console import Console
    from rich.progress import track
    from rich.table import Table

    rows = []
    import sys

    only = sys.argv[1:]
    try:
        import bitsandbytes

        bnb_version = bitsandbytes.__version__
    except ImportError:
        bnb_version = None
    cases = [c for c in CASES if (not only or any(o in c.name for o in only)) and (c.method != "qlora" or bnb_version)]
    for case in track(cases, description="training steps"):
        real = _measure(case)
        est = _estimate(case)
        rows.append((case, real, est))
        gc.collect()
    table = Table(title="CPU training step: measured live bytes vs estimate (MB)")
    for col in ("case", "weights m/e", "states m/e", "saved acts m/e", "logits saved m", "peak m/e", "peak err",
                "peak at m/e"):
        table.add_column(col)
    lines = [
        "# Memory model vs measured CPU training steps",
        "",
        f"torch {torch.__version__}, transformers {transformers.__version__}, "
        f"bitsandbytes {bnb_version or 'not installed (QLoRA cases skipped)'}; re-run: "
        "`python -m benchmarks.memory_measure_cpu`.",
        "Small real architectures on random weights (Llama: h=512, I=1376, 4 layers, 8 heads, 2 KV heads, "
        "V=8000; GPT-2: h=512, 4 layers, 8 heads, V=8000), SDPA, fused AdamW, second step measured.",
        "Measured = peak of live tensor bytes (a TorchDispatchMode following every storage until freed); "
        "saved activations = storages autograd saved for backward (logits-sized ones apart).",
        "The estimate's 'saved acts' is its activations term (without checkpointing: all layers; with: layer inputs).",
        "",
        "| case | weights MB m / e | AdamW states MB m / e | autocast weight copies MB m / e "
        "| saved activations MB m / e (err) | logits saved MB m | peak MB m / e | peak error | peak moment m / e |",
        "|---|---|---|---|---|---|---|---|---|",
    ]
    errors = []
    for case, real, est in rows:
        mb = lambda x: f"{float(x) / 1e6:.1f}"  # noqa: E731
        err = (float(est["peak"]) - float(real["peak"])) / float(real["peak"]) * 100
        errors.append(abs(err))
        table.add_row(case.name, f"{mb(real['weights'])}/{mb(est['weights'])}", f"{mb(real['states'])}/{mb(est['states'])}",
                      f"{mb(real['saved'])}/{mb(est['saved'])}", mb(real["logits"]),
                      f"{mb(real['peak'])}/{mb(est['peak'])}", f"{err:+.0f}%", f"{real['phase']}/{est['phase']}")
        lines.append(
            f"| {case.name} | {mb(real['weights'])} / {mb(est['weights'])} | {mb(real['states'])} / {mb(est['states'])} "
            f"| {mb(real['copies'])} / {mb(est['copies'])} "
            f"| {mb(real['saved'])} / {mb(est['saved'])} ({_pct(float(est['saved']), float(real['saved']))}) "
            f"| {mb(real['logits'])} | {mb(real['peak'])} / {mb(est['peak'])} | {err:+.1f}% | {real['phase']} / {est['phase']} |"
        )
    within = sum(1 for e in errors if e <= 20)
    lines += ["", f"Peak within ±20%: {within}/{len(errors)}; mean |error| {sum(errors) / len(errors):.1f}%.", ""]
    Console().print(table)
    Console().print(f"peak within ±20%: {within}/{len(errors)}")
    RESULTS.parent.mkdir(parents=True, exist_ok=True)
    RESULTS.write_text("\n".join(lines))
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
