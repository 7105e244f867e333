"Packaging for qwen_engine, read from settings.ini (nbdev 2's template cannot be fetched here)."
from configparser import ConfigParser
from setuptools import setup

cfg = ConfigParser(delimiters=["="])
cfg.read("settings.ini", encoding="utf-8")
c = cfg["DEFAULT"]

setup(
    name=c["lib_name"],
    version=c["version"],
    description=c["description"],
    author=c["author"],
    license="Apache-2.0",
    python_requires=f">={c['min_python']}",
    packages=["qwen_engine", "qwen_engine.kernels", "qwen_engine.assets"],
    package_dir={"qwen_engine.kernels": "kernels"},
    package_data={"qwen_engine.kernels": ["*.cu", "*.cuh"], "qwen_engine.assets": ["*.json", "SHA256SUMS", "tokenizer/*"]},
    install_requires=c["requirements"].split(),
    extras_require={"gpu": c["gpu_requirements"].split(), "dev": c["dev_requirements"].split()},
    entry_points={"console_scripts": [c["console_scripts"]]},
    zip_safe=False,
)
