from synthrisk.workflow import logged

with logged(snakemake):
    from synthrisk.data import load_schema
    from synthrisk.io import read_table, write_table
    from synthrisk.privacy_audit import stage

    w = snakemake.wildcards
    frame = stage.run_block(read_table(snakemake.input.real), load_schema(snakemake.input.schema),
                            snakemake.params.settings, w.generator, float(w.epsilon), w.world, int(w.block))
    print(frame.describe().to_string())
    write_table(frame, snakemake.output[0])
