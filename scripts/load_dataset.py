from synthrisk.study.workflow import logged

with logged(snakemake):
    from synthrisk.data import load_dataset, load_schema
    from synthrisk.io import write_table

    schema = load_schema(snakemake.input.schema)
    real = load_dataset(schema)
    print(f"{schema.name}: {len(real)} rows, {real.shape[1]} columns, {int(real.isna().sum().sum())} missing cells")
    write_table(real, snakemake.output.real)
