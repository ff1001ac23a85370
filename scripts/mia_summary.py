from synthrisk.workflow import logged

with logged(snakemake):
    from synthrisk.mia.summary import write_summary

    write_summary(snakemake.input.runs, snakemake.params.tables, snakemake.params.figures)
