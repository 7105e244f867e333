import os, time, torch, json
os.environ["QE_CACHE"] = "/tmp/qe_cache"
from qwen_engine.engine import Model, generate
from qwen_engine.reference import forward, new_state
out = {}
mc, mg = Model(device="cpu"), Model(device="cuda")
ids = mc.prompt_ids("Once upon a time, in a land far away,")
t = time.perf_counter(); tc = list(generate(mc, ids, 24)); out["cpu_s"] = time.perf_counter() - t
t = time.perf_counter(); tg = list(generate(mg, ids, 24)); torch.cuda.synchronize(); out["gpu_s"] = time.perf_counter() - t
out["cpu_tokens"], out["gpu_tokens"] = tc, tg
out["agree_prefix"] = next((i for i, (a, b) in enumerate(zip(tc, tg)) if a != b), len(tc))
lc = forward(mc.W, mc.cfg, ids, new_state(mc.cfg))[0]
lg = forward(mg.W, mg.cfg, ids, new_state(mg.cfg))[0].cpu()
out["prompt_logits_max_abs_diff_gpu_vs_cpu"] = (lc.float() - lg.float()).abs().max().item()
out["gpu_repeat_bit_identical"] = torch.equal(lg, forward(mg.W, mg.cfg, ids, new_state(mg.cfg))[0].cpu())
print(json.dumps(out))
json.dump(out, open(os.path.join(os.environ["OUT"], "gpu_reference.json"), "w"), indent=1)
