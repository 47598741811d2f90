"""cmake --install puts the package under <prefix>/lib/python3.X/dist-packages/pto (X: the minor
version of the interpreter pto was built for, where Debian's python3 looks under /usr/local) and
it finds the installed libraries relative to itself."""
import os
import shutil
import subprocess
import sys

import pytest

from conftest import BUILD, SRC


def test_installed_package(tmp_path):
    cmake = shutil.which("cmake")
    if not cmake:
        pytest.skip("cmake not found")
    prefix = tmp_path / "prefix"
    subprocess.run([cmake, "--install", BUILD, "--prefix", str(prefix)], check=True,
                   capture_output=True)
    pkg = prefix / "lib" / f"python{sys.version_info[0]}.{sys.version_info[1]}" / "dist-packages"
    assert (pkg / "pto" / "__init__.py").exists()
    code = ("import numpy as np, pto, sys\n"
            "assert pto.__file__.startswith(sys.argv[1]), pto.__file__\n"
            "p = pto.compile(sys.argv[2])\n"
            "x = np.ones((16, 64), np.float32); y = np.zeros_like(x)\n"
            "with pto.ChipWorker(pto.RunConfig(cores=1)) as w: w.run(p, [x, y, 2.0])\n"
            "assert (y == 3).all()\n"
            "from pto import ChipWorker, RunConfig, benchmark\n"  # PyPTO's names
            "with ChipWorker(config=RunConfig(platform='a2a3sim')) as w: w.run(p, x, y, 4.0)\n"
            "st = benchmark(p, [x, y, 1.0], rounds=3, warmup=1, platform='a2a3sim', device_id=0)\n"
            "assert len(st.device_wall_us) == 3 and st.invocations[0].host_wall_us() > 0\n"
            "assert pto.cache.stats()['entries'] >= 1\n"
            "import pto._capi as c; print(c._find('libpto_runtime.so'))\n")
    env = {k: v for k, v in os.environ.items() if k not in ("PYTHONPATH", "PTO_LIB_DIR")}
    env["PYTHONPATH"] = str(pkg)
    r = subprocess.run([sys.executable, "-c", code, str(pkg),
                        os.path.join(SRC, "examples", "runtime", "add_scalar.ptir")],
                       env=env, capture_output=True, text=True, cwd=str(tmp_path))
    assert r.returncode == 0, r.stderr
    assert r.stdout.strip().startswith(str(prefix)), r.stdout
