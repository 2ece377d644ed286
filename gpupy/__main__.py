"""python -m gpupy: which driver and device gpupy uses, and how it is set up;
with --calibrate, its cost model measured again and what it decides."""

import argparse
import json

# Work a program meets, for --calibrate to say where the model puts it:
# (name, elements, operations per element, math functions among them,
# inputs uploaded first (bytes), inputs read back first (bytes)).
TYPICAL_WORK = [
    ("a few elements, a short expression", 256, 4, 0, 1024, 0),
    ("a 64x64 tile, a short expression", 4096, 4, 0, 16384, 0),
    ("a 512x512 image, 10 operations, inputs on the host", 1 << 18, 10, 0, 1 << 20, 0),
    ("a 512x512 image, 10 operations, inputs on the device", 1 << 18, 10, 0, 0, 0),
    ("a 2048x2048 image, 30 operations with 4 math functions", 1 << 22, 30, 4, 1 << 24, 0),
    ("a 2048x2048 image, inputs on the device, 100 operations", 1 << 22, 100, 0, 0, 0),
]


def calibrate_and_report():
    import gpupy

    model = gpupy.calibrate()
    print(f"cost model of the {gpupy.driver()} driver: {model['source']}")
    if model["path"]:
        print(f"file: {model['path']}")
    if model["seconds"] is not None:
        print(f"measured in {model['seconds']:.2f} s")
    for note in model["notes"]:
        print(f"note: {note}")
    if not model["parameters"]:
        return
    print("parameters (ns):")
    for name, value in sorted(model["parameters"].items()):
        print(f"  {name}: {value:.4g}")
    print(f"eager threshold: {model['eager_threshold']} elements")
    print("where work goes:")
    for name, elements, ops, math, upload, download in TYPICAL_WORK:
        where = gpupy._core.placement_of(elements, ops, math, elements * 4, upload, download)
        print(f"  {name}: {where}")


def main(argv=None):
    parser = argparse.ArgumentParser(
        prog="python -m gpupy",
        description="Show which driver and device gpupy uses, its limits, block size, cache budget, host engine, "
                    "fallback mode and placement. The environment variables GPUPY_DRIVER, GPUPY_FALLBACK and "
                    "GPUPY_PLACEMENT change them (see the README).")
    parser.add_argument("--json", action="store_true", help="print the configuration as one JSON object")
    parser.add_argument("--calibrate", action="store_true",
                        help="measure the cost model again, save it, and print it with where it puts typical work")
    args = parser.parse_args(argv)
    import gpupy  # after parsing: --help answers without starting a driver

    if args.calibrate:
        calibrate_and_report()
    elif args.json:
        print(json.dumps(gpupy._runtime.config(), indent=2))
    else:
        gpupy.show_config()


if __name__ == "__main__":
    main()
