from synthrisk.workflow import logged

with logged(snakemake):
    from synthrisk.data import load_schema
    from synthrisk.data.split import ROW_ID
    from synthrisk.generators.run import run_generator
    from synthrisk.io import read_table, write_json, write_table

    schema = load_schema(snakemake.input.schema)
    train = read_table(snakemake.input.train).drop(columns=ROW_ID)
    synthetic, status = run_generator(
        snakemake.wildcards.generator, snakemake.params.spec, train, schema,
        n=snakemake.params.n, seed=int(snakemake.wildcards.seed),
    )
    print(status.get("traceback") or f"{status['status']}: {len(synthetic)} rows")
    write_table(synthetic, snakemake.output.synthetic)
    write_json(status, snakemake.output.status)
