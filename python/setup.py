"""pip install ./python: the inart package (Python over ctypes).

Nothing is downloaded or compiled here (the "inart" torch.distributed
backend compiles its C++ half, inart/_c10d.cpp, on first use).  If the C library is built in the
checkout (build/libinart_worker.so, or $INART_BUILD_DIR), it is copied into
the package (inart/_lib/), so the installed package works without the
checkout; otherwise the package finds the library at run time
(INART_WORKER_LIB, or the system's after `meson install`).  Needs Debian's
python3-torch for inart.torch and python3-numpy for numpy arrays; neither is
a hard requirement of `import inart`.
"""
import os
import shutil

from setuptools import setup
from setuptools.command.build_py import build_py

HERE = os.path.dirname(os.path.abspath(__file__))


class BuildPy(build_py):
    """build_py that also copies libinart_worker.so from the checkout."""

    def run(self):
        super().run()
        build = os.environ.get("INART_BUILD_DIR") or os.path.join(HERE, "..", "build")
        src = os.path.join(build, "libinart_worker.so")
        if os.path.exists(src):
            dst_dir = os.path.join(self.build_lib, "inart", "_lib")
            os.makedirs(dst_dir, exist_ok=True)
            shutil.copyfile(os.path.realpath(src), os.path.join(dst_dir, "libinart_worker.so"))
            print("inart: bundled %s" % os.path.realpath(src))
        else:
            print("inart: %s not built; the package will look for libinart_worker at run "
                  "time (INART_WORKER_LIB or the system's)" % src)


setup(
    name="inart",
    version="0.1.0",
    description="All-reduce, a PyTorch backend and DDP comm hook over the InArt data plane",
    license="MIT",
    packages=["inart"],
    # the torch.distributed backend's C++ half, compiled on first use
    # (inart/backend.py: torch.utils.cpp_extension, cached)
    package_data={"inart": ["_c10d.cpp"]},
    python_requires=">=3.9",
    cmdclass={"build_py": BuildPy},
    zip_safe=False,
)
