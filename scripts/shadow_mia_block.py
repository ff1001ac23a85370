from synthrisk.study.workflow import logged

with logged(snakemake):
    from synthrisk.data import load_schema
    from synthrisk.io import read_table, write_table
    from synthrisk.shadow_mia import stage

    w = snakemake.wildcards
    frames = {name: read_table(snakemake.input[name]) for name in stage.POPULATION_FILES}
    frame = stage.run_block(frames, load_schema(snakemake.input.schema), read_table(snakemake.input.plan),
                            snakemake.params.settings, w.generator, w.role, int(w.block))
    print(frame[stage.STATUS_COLUMNS].to_string())
    write_table(frame, snakemake.output[0])
