from synthrisk.study.workflow import logged

with logged(snakemake):
    from synthrisk.dp import experiments, stage
    from synthrisk.io import write_table

    settings = stage.settings_from_config(snakemake.params.settings)
    grid = experiments.variance_grid(settings, int(snakemake.params.seed))
    print(grid.to_string(max_rows=60))
    write_table(grid, snakemake.output[0])  # parquet: exact floats for the two readers
