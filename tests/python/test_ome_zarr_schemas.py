"""The OME-Zarr images StackLens writes (NGFF 0.4 and 0.5, with a pyramid) validate against the
official OME-NGFF JSON schemas (copies in tests/io/data/ome_ngff_schemas, $refs resolved from
them, never from the network), through Debian's python3-jsonschema."""

import json
import os
import subprocess
import tempfile
import unittest

import jsonschema
import numpy as np

import stacklens as sl

SCHEMAS = os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "io", "data",
                       "ome_ngff_schemas")
CLI = os.environ.get("STACKLENS_CLI")


def load_schemas(version):
    folder = os.path.join(SCHEMAS, version)
    return {name: json.load(open(os.path.join(folder, name), encoding="utf-8"))
            for name in sorted(os.listdir(folder)) if name.endswith(".schema")}


def offline(uri):
    raise AssertionError("a $ref outside the copied schemas: " + uri)


def validator(version, name):
    """A Draft 2020-12 validator of schema `name` whose $refs resolve among the copies only."""
    schemas = load_schemas(version)
    schema = schemas[name]
    cls = jsonschema.Draft202012Validator
    try:  # jsonschema ≥ 4.18: the referencing library; no retrieval unless one is given
        from referencing import Registry, Resource
        from referencing.jsonschema import DRAFT202012
        registry = Registry().with_resources(
            (s["$id"], Resource.from_contents(s, default_specification=DRAFT202012))
            for s in schemas.values())
        return cls(schema, registry=registry)
    except ImportError:  # Debian 12's 4.10
        store = {s["$id"]: s for s in schemas.values()}
        resolver = jsonschema.RefResolver.from_schema(
            schema, store=store, handlers={"http": offline, "https": offline})
        return cls(schema, resolver=resolver)


def attributes_of(folder, version):
    if version == "0.4":
        with open(os.path.join(folder, ".zattrs"), encoding="utf-8") as f:
            return json.load(f)
    with open(os.path.join(folder, "zarr.json"), encoding="utf-8") as f:
        group = json.load(f)
    assert group["zarr_format"] == 3 and group["node_type"] == "group", group
    return group["attributes"]


@unittest.skipUnless(CLI, "STACKLENS_CLI names the stacklens-cli under test")
class OmeZarrSchemas(unittest.TestCase):
    def setUp(self):
        self.folder = tempfile.TemporaryDirectory()
        rng = np.random.default_rng(4)
        self.stack = self.path("stack.fits")
        sl.write(self.stack, rng.uniform(0, 100, (5, 40, 36)).astype(np.float32),
                 spacing=(0.3, 0.1, 0.1), units=("um", "um", "um"))
        self.image = self.path("image.fits")
        sl.write(self.image, rng.uniform(0, 100, (33, 47)).astype(np.float32))

    def tearDown(self):
        self.folder.cleanup()

    def path(self, name):
        return os.path.join(self.folder.name, name)

    def written(self, source, version, levels, command="convert", *extra):
        out = self.path("%s-%s-%d.ome.zarr" % (os.path.basename(source), version, levels))
        args = [CLI, command, source, out, "--zarr-version", version, "--levels", str(levels)]
        subprocess.run(args + list(extra), check=True, capture_output=True)
        return out

    def assert_valid(self, folder, version, levels):
        attributes = attributes_of(folder, version)
        # The strict schema asks for the downsampling's "type" and "metadata", which a single
        # level has none of (the writer leaves them out there on purpose).
        names = ("image.schema", "strict_image.schema") if levels > 1 else ("image.schema",)
        for name in names:
            errors = sorted(validator(version, name).iter_errors(attributes), key=str)
            self.assertEqual([e.message for e in errors], [], "%s: %s" % (folder, name))
        multiscales = (attributes if version == "0.4" else attributes["ome"])["multiscales"]
        for dataset in multiscales[0]["datasets"]:  # every level is an array
            level = os.path.join(folder, dataset["path"])
            meta = ".zarray" if version == "0.4" else "zarr.json"
            self.assertTrue(os.path.isfile(os.path.join(level, meta)), level)

    def test_stacks_and_images_with_pyramids_validate(self):
        for version in ("0.4", "0.5"):
            for source in (self.stack, self.image):
                for levels in (1, 3):
                    with self.subTest(version=version, source=source, levels=levels):
                        out = self.written(source, version, levels)
                        self.assert_valid(out, version, levels)

    def test_a_processing_command_output_validates(self):
        for version in ("0.4", "0.5"):
            with self.subTest(version=version):
                out = self.written(self.stack, version, 2, "blur", "--sigma", "1",
                                   "--backend", "cpu")
                self.assert_valid(out, version, 2)

    def test_a_sharded_0_5_output_validates(self):
        # --zarr-shards changes the arrays' codecs, never the OME attributes: still valid, and
        # every level's zarr.json names the sharding codec.
        out = self.written(self.stack, "0.5", 3, "convert", "--zarr-chunks", "2,8,8",
                           "--zarr-shards", "4,16,16")
        self.assert_valid(out, "0.5", 3)
        for level in ("0", "1", "2"):
            with open(os.path.join(out, level, "zarr.json"), encoding="utf-8") as f:
                meta = json.load(f)
            self.assertEqual(meta["codecs"][0]["name"], "sharding_indexed", level)

    def test_the_schemas_reject_what_they_should(self):
        # The validators are not vacuous: a multiscale without axes or datasets fails.
        for version in ("0.4", "0.5"):
            attributes = attributes_of(self.written(self.stack, version, 1), version)
            multiscale = (attributes if version == "0.4" else attributes["ome"])["multiscales"][0]
            del multiscale["axes"]
            multiscale["datasets"] = []
            with self.subTest(version=version):
                self.assertFalse(validator(version, "image.schema").is_valid(attributes))


if __name__ == "__main__":
    unittest.main()
