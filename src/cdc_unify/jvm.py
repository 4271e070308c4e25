"""The project's JVM functions: Java sources shipped in the package (cdc_unify/java), compiled
once per machine and Spark version by the JDK's `javac` into a jar that every session puts on its
classpath (`spark.jars`: the driver's, and on a cluster the executors', which fetch it from the
driver). A staging model that reads a message format in the JVM reads each value once, with no
Python round trip and no SQL pass over a parsed variant per field (docs/benchmarks.md).

    python -m cdc_unify.jvm     # build the jar now (make's java-check does), print its path

The jar is cached under $CDC_UNIFY_JVM_CACHE (default ~/.cache/cdc-unify/jvm), named by a hash of
the sources and the Spark version, so an edited source or another Spark builds a new one; a build
writes to a temporary file and renames it, so concurrent processes never read half a jar.
"""

from __future__ import annotations

import hashlib
import os
import shutil
import subprocess
import sys
import tempfile
import zipfile
from functools import cache
from pathlib import Path

import pyspark
from pyspark.sql import SparkSession
from pyspark.sql import types as T

JAVA_SOURCES = Path(__file__).with_name("java")
CACHE_ENV = "CDC_UNIFY_JVM_CACHE"
JAVA_RELEASE = "17"

TEXT_MAP = T.MapType(T.StringType(), T.StringType())
# The types of a message function's staged-row fields; every other field is a string.
STAGED_FIELD_TYPES = {
    "row_index": T.IntegerType(),
    "primary_key_columns": T.ArrayType(T.StringType()),
    **dict.fromkeys(("before", "after", "column_source_types", "column_types", "key_image"), TEXT_MAP),
    **dict.fromkeys(("before_is_partial", "after_is_partial"), T.BooleanType()),
    **dict.fromkeys(("event_ts_micros", "emitted_ts_micros", "binlog_number"), T.LongType()),
}


def staged_rows(*names: str) -> T.ArrayType:
    """The rows a message function (a cdcunify.*Rows class of FUNCTIONS) builds, fields in its
    order: row_index, error_code, error_detail, then the contract's decoded columns it fills, its
    times as microseconds since the epoch."""
    fields = ("row_index", "error_code", "error_detail", *names)
    return T.ArrayType(T.StructType([T.StructField(n, STAGED_FIELD_TYPES.get(n, T.StringType())) for n in fields]))


CANAL_ROWS = staged_rows(
    "event_kind", "op", "database_name", "table_name", "primary_key_columns", "before", "after",
    "before_is_partial", "after_is_partial", "column_source_types", "column_types", "event_ts_micros",
    "event_ts_precision", "emitted_ts_micros", "transaction_id", "ddl_statement",
)  # fmt: skip
# `message_op` is the op, null for a DDL whose statement the model classifies (cdc_ddl_op).
CLOUDCANAL_ROWS = staged_rows(
    "event_kind", "message_op", "database_name", "schema_name", "table_name", "primary_key_columns",
    "primary_key_source", "before", "after", "before_is_partial", "after_is_partial", "column_source_types",
    "column_types", "event_ts_micros", "emitted_ts_micros", "ddl_statement",
)  # fmt: skip
# `position_id` (the natural id: position|op) null for a message without a position;
# `position_digits` the position number's digits.
DATAWORKS_ROWS = staged_rows(
    "event_kind", "op", "source_db_type", "database_name", "schema_name", "table_name", "primary_key_columns",
    "primary_key_source", "before", "after", "before_is_partial", "after_is_partial", "column_source_types",
    "column_types", "event_ts_micros", "emitted_ts_micros", "source_position", "position_digits", "position_id",
    "ddl_statement",
)  # fmt: skip
# `message_op` null for a DDL record (the model classifies its statement with cdc_ddl_op); `key_image`
# the values primary_key is built from; `position_digits` the storeDataSequence's digits.
OMS_DEFAULT_ROWS = staged_rows(
    "event_kind", "message_op", "source_db_type", "tenant_name", "database_name", "table_name",
    "primary_key_columns", "primary_key_source", "before", "after", "before_is_partial", "after_is_partial",
    "column_source_types", "column_types", "key_image", "event_ts_micros", "event_ts_precision", "source_position",
    "transaction_id", "position_digits", "natural_id", "ddl_statement",
)  # fmt: skip
# Every value kept as sent (GoldenGate sends no types); `position_digits` the trail position's digits.
OGG_ROWS = staged_rows(
    "event_kind", "op", "database_name", "schema_name", "table_name", "primary_key_columns", "primary_key_source",
    "before", "after", "before_is_partial", "after_is_partial", "column_types", "event_ts_micros",
    "event_ts_precision", "emitted_ts_micros", "source_position", "position_digits", "natural_id",
)  # fmt: skip
# `message_op` null for a DDL (the model classifies its statement with cdc_ddl_op); `position_digits`
# the position number's digits (binlog file index * 2^32 + offset, then xoffset).
MAXWELL_ROWS = staged_rows(
    "event_kind", "message_op", "database_name", "table_name", "primary_key_columns", "primary_key_source",
    "before", "after", "before_is_partial", "after_is_partial", "column_types", "event_ts_micros",
    "event_ts_precision", "source_position", "transaction_id", "position_digits", "ddl_statement",
)  # fmt: skip
# `binlog_number` a format-one event's binlog file index * 2^32 + offset (null for a DDL or past a
# bigint); the model orders a table's events by it within their second and keys them by its DDL.
CKAFKA_ROWS = staged_rows(
    "event_kind", "op", "database_name", "table_name", "before", "after", "before_is_partial",
    "after_is_partial", "column_types", "event_ts_micros", "event_ts_precision", "emitted_ts_micros",
    "source_position", "transaction_id", "binlog_number", "ddl_statement",
)  # fmt: skip
# `rowid_key` the value part of meta.rowid (the model's primary_key splits it on \u0001);
# `position_digits` the scn's digits.
SHAREPLEX_ROWS = staged_rows(
    "event_kind", "op", "database_name", "table_name", "rowid_key", "before", "after", "before_is_partial",
    "after_is_partial", "column_types", "event_ts_micros", "event_ts_precision", "emitted_ts_micros",
    "source_position", "transaction_id", "position_digits", "natural_id",
)  # fmt: skip
# An image in canonical text (cdcunify.CanonicalImage): values, logical types, the reason it cannot be read.
CANONICAL_IMAGE = T.StructType(
    [
        T.StructField("values", TEXT_MAP),
        T.StructField("types", TEXT_MAP),
        T.StructField("error", T.StringType()),
    ]
)
# SQL name -> (Java class, return type)
FUNCTIONS = {
    "cdc_canal_rows": ("cdcunify.CanalRows", CANAL_ROWS),
    "cdc_cloudcanal_rows": ("cdcunify.CloudCanalRows", CLOUDCANAL_ROWS),
    "cdc_dataworks_rows": ("cdcunify.DataWorksRows", DATAWORKS_ROWS),
    "cdc_oms_default_rows": ("cdcunify.OmsDefaultRows", OMS_DEFAULT_ROWS),
    "cdc_ogg_rows": ("cdcunify.OggRows", OGG_ROWS),
    "cdc_maxwell_rows": ("cdcunify.MaxwellRows", MAXWELL_ROWS),
    "cdc_ckafka_rows": ("cdcunify.CkafkaRows", CKAFKA_ROWS),
    "cdc_shareplex_rows": ("cdcunify.SharePlexRows", SHAREPLEX_ROWS),
    "cdc_jvm_canonical_image": ("cdcunify.CanonicalImage", CANONICAL_IMAGE),
    "cdc_exact_variant": ("cdcunify.ExactVariant", T.VariantType()),
}


class JavaCompilerMissing(RuntimeError):
    """No `javac`: the message says how to get one."""


def sources() -> list[Path]:
    return sorted(JAVA_SOURCES.rglob("*.java"))


def spark_jars() -> Path:
    return Path(pyspark.__file__).parent / "jars"


def cache_dir() -> Path:
    configured = os.environ.get(CACHE_ENV)
    return Path(configured).expanduser() if configured else Path.home() / ".cache" / "cdc-unify" / "jvm"


def sources_digest() -> str:
    digest = hashlib.sha256(pyspark.__version__.encode())
    for path in sources():
        digest.update(str(path.relative_to(JAVA_SOURCES)).encode() + b"\0" + path.read_bytes() + b"\0")
    return digest.hexdigest()[:16]


def javac() -> str:
    home = os.environ.get("JAVA_HOME")
    found = shutil.which("javac") or (str(Path(home) / "bin" / "javac") if home else None)
    if found is None or not Path(found).is_file():
        raise JavaCompilerMissing(
            "the JVM functions (src/cdc_unify/java) are compiled with javac, which is not on the PATH"
            " (nor in $JAVA_HOME/bin): install a JDK 17 or newer, e.g. on Debian/Ubuntu"
            " `apt-get install openjdk-17-jdk-headless`, or set JAVA_HOME to one"
        )
    return found


@cache
def functions_jar() -> Path:
    """The jar of the project's JVM functions, built first if this machine has none for these sources."""
    jar = cache_dir() / f"cdc-unify-functions-{sources_digest()}.jar"
    if jar.is_file():
        return jar
    compiler = javac()
    jar.parent.mkdir(parents=True, exist_ok=True)
    print(f"cdc-unify: compiling the JVM functions into {jar} (once per machine)", file=sys.stderr, flush=True)
    with tempfile.TemporaryDirectory(dir=jar.parent) as work:
        classes = Path(work) / "classes"
        command = [compiler, "--release", JAVA_RELEASE, "-nowarn", "-cp", str(spark_jars() / "*")]
        done = subprocess.run([*command, "-d", str(classes), *map(str, sources())], capture_output=True, text=True)
        if done.returncode != 0:
            raise RuntimeError(f"javac failed on src/cdc_unify/java:\n{done.stderr.strip()}")
        built = Path(work) / jar.name
        with zipfile.ZipFile(built, "w", zipfile.ZIP_DEFLATED) as archive:
            for path in sorted(classes.rglob("*.class")):
                archive.write(path, path.relative_to(classes).as_posix())
        os.replace(built, jar)
    return jar


def register(spark: SparkSession) -> None:
    """Make the JVM functions callable from SQL in this session (its classpath has functions_jar)."""
    for name, (java_class, return_type) in FUNCTIONS.items():
        spark.udf.registerJavaFunction(name, java_class, return_type)


if __name__ == "__main__":
    try:
        print(functions_jar())
    except (JavaCompilerMissing, RuntimeError) as error:
        sys.exit(f"cdc-unify: {error}")
