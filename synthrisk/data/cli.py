"""`synthrisk schema infer FILE`: draft a dataset schema from a data file."""

from __future__ import annotations


def add_command(sub) -> None:
    p = sub.add_parser("schema", help="work with dataset schemas")
    actions = p.add_subparsers(dest="action", required=True)
    infer = actions.add_parser(
        "infer", help="print a draft schema of a data file: types, suggested drops, roles, domain seen in the data")
    infer.add_argument("file", help="the data file (Parquet, or .csv/.tsv/.txt/.dat/.data, optionally .gz/.bz2/.zip/.xz)")
    infer.add_argument("--name", help="dataset name (default: from the file name)")
    infer.add_argument("--sensitive", nargs="+", default=[], metavar="COL", help="the sensitive attribute(s)")
    infer.add_argument("--domain-from-data", action="store_true",
                       help="write the levels and bounds seen in the data as active entries (NOT public "
                            "metadata: a DP release using them leaks the records' domain)")
    reader = infer.add_argument_group("reader options (also written into the schema's source.options)")
    reader.add_argument("--sep", help='field separator, or "whitespace" for runs of spaces/tabs')
    reader.add_argument("--no-header", dest="header", action="store_false", default=None,
                        help="the file has no header line (then give --names)")
    reader.add_argument("--names", nargs="+", metavar="COL", help="column names, in file order")
    reader.add_argument("--encoding", help="text encoding, e.g. latin-1 (default utf-8)")
    reader.add_argument("--na-values", nargs="+", metavar="TEXT", help='missing-value markers, e.g. "?" NA')
    reader.add_argument("--decimal", help="decimal mark, e.g. ,")
    reader.add_argument("--comment", help="lines starting with this character are skipped")
    reader.add_argument("--skip-rows", type=int, help="lines to skip at the top of the file")
    infer.add_argument("--out", help="write the schema here instead of printing it")
    infer.set_defaults(func=run_infer)


def run_infer(args) -> str:
    from pathlib import Path

    from ..io import ReadOptions, read_table
    from .infer import dataset_name, schema_yaml

    options = {key: value for key in ("sep", "header", "names", "encoding", "na_values", "decimal", "comment",
                                       "skip_rows")
               if (value := getattr(args, key)) is not None}
    frame = read_table(args.file, ReadOptions.from_mapping(options, what="reader options"))
    source = {"path": str(Path(args.file).resolve()), **({"options": options} if options else {})}
    text = schema_yaml(frame, args.name or dataset_name(args.file), source, args.sensitive,
                       args.domain_from_data, what=Path(args.file).name)
    if args.out:
        from ..outputs import check_output_file, write_file

        # Its folder is created if missing; the file is written in one step and recorded as synthrisk's.
        write_file(check_output_file(args.out, {"FILE": args.file}), text, command="schema infer", option="--out")
        return f"wrote {args.out}\n"
    return text
