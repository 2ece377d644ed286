"""python -m gpupy: which driver and device gpupy uses, and how it is set up."""

import argparse
import json


def main(argv=None):
    parser = argparse.ArgumentParser(
        prog="python -m gpupy",
        description="Show which driver and device gpupy uses, its limits, block size, cache budget, host engine, "
                    "fallback mode and placement. The environment variables GPUPY_DRIVER, GPUPY_FALLBACK and "
                    "GPUPY_PLACEMENT change them (see the README).")
    parser.add_argument("--json", action="store_true", help="print the configuration as one JSON object")
    args = parser.parse_args(argv)
    import gpupy  # after parsing: --help answers without starting a driver

    if args.json:
        print(json.dumps(gpupy._runtime.config(), indent=2))
    else:
        gpupy.show_config()


if __name__ == "__main__":
    main()
