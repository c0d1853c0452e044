"""The wheel, installed into a fresh virtual environment outside the checkout, as a new user gets it."""

import subprocess
import sys
import textwrap
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[1]

CORE_CHECK = textwrap.dedent(
    """
    import sys

    import gymnasium as gym
    import numpy as np
    from gymnasium.utils.env_checker import check_env

    import nas_envs
    from nas_envs.extras import MissingExtraError

    assert "site-packages" in nas_envs.__file__, nas_envs.__file__
    for env_id in nas_envs.ENV_BUNDLES:
        check_env(gym.make(env_id).unwrapped, skip_render_check=True)
        env = gym.make(env_id)
        _, info = env.reset(seed=0)
        done = False
        while not done:
            _, reward, terminated, truncated, info = env.step(int(np.flatnonzero(info["action_mask"])[0]))
            done = terminated or truncated
        assert set(info["objectives"]) == set(env.unwrapped.benchmark.objectives), env_id
    for name in ("darts", "fbnet", "cityseg-mop15"):
        out = nas_envs.make_benchmark(name).evaluate(nas_envs.make_benchmark(name).space.sample(100, seed=0))
        assert all(len(v) == 100 for v in out.values())
    heavy = [m for m in ("torch", "xgboost", "scipy", "matplotlib", "pymoo", "optuna") if m in sys.modules]
    assert not heavy, heavy
    env = gym.make("SurrNAS-DARTS-v1", render_mode="rgb_array")
    env.reset(seed=0)
    try:
        env.render()
    except MissingExtraError as error:
        assert "nas-envs[plot]" in str(error), error
    else:
        raise AssertionError("rendering without matplotlib did not name the extra")
    print("core ok")
    """
)

FULL_CHECK = textwrap.dedent(
    """
    import gymnasium as gym
    from gymnasium.utils.env_checker import check_env
    from stable_baselines3.common.env_checker import check_env as sb3_check_env

    import nas_envs

    for env_id in nas_envs.ENV_BUNDLES:
        check_env(gym.make(env_id).unwrapped)
        sb3_check_env(gym.make(env_id).unwrapped)
    print("checkers ok")
    """
)


def run(command: list[str], cwd: Path, timeout: int = 900) -> str:
    done = subprocess.run(command, cwd=cwd, capture_output=True, text=True, timeout=timeout)
    assert done.returncode == 0, f"{command} failed:\n{done.stdout[-3000:]}\n{done.stderr[-3000:]}"
    return done.stdout


@pytest.mark.slow
def test_the_wheel_runs_outside_the_checkout(tmp_path):
    wheels = tmp_path / "wheels"
    run([sys.executable, "-m", "pip", "wheel", "--no-deps", "--no-build-isolation", "-w", str(wheels), str(ROOT)],
        cwd=tmp_path)
    wheel = next(wheels.glob("nas_envs-*.whl"))
    assert wheel.stat().st_size < 25 * 2**20
    venv = tmp_path / "venv"
    run([sys.executable, "-m", "venv", str(venv)], cwd=tmp_path)
    python, elsewhere = str(venv / "bin" / "python"), tmp_path / "elsewhere"
    elsewhere.mkdir()
    run([python, "-m", "pip", "install", "-q", str(wheel)], cwd=elsewhere)
    assert "core ok" in run([python, "-c", CORE_CHECK], cwd=elsewhere)

    # Commands that need the repository's training data say so.
    data = subprocess.run([str(venv / "bin" / "nas-envs"), "data-card", "darts"], cwd=elsewhere, capture_output=True,
                          text=True)
    assert data.returncode == 2 and "not part of the installed package" in data.stderr

    # The README's main job with the plotting extra: an anytime plot of two agents.
    run([python, "-m", "pip", "install", "-q", f"{wheel}[plot]"], cwd=elsewhere)
    for agent in ("rs", "re"):
        run([str(venv / "bin" / "nas-envs"), "run", "--env", "SurrNAS-DARTS-v1", "--agent", agent, "--budget", "6h",
             "--seeds", "2", "--out", "runs"], cwd=elsewhere)
    printed = run([str(venv / "bin" / "nas-envs"), "plot", "runs", "-o", "anytime.png"], cwd=elsewhere)
    assert "re" in printed and (elsewhere / "anytime.png").stat().st_size > 0

    # Every id passes both environment checkers (SB3's needs the RL extra, hence torch: the CPU build on disk).
    run([python, "-m", "pip", "install", "-q", "torch==2.13.0", f"{wheel}[rl]"], cwd=elsewhere, timeout=1500)
    assert "checkers ok" in run([python, "-c", FULL_CHECK], cwd=elsewhere)
