from synthrisk.workflow import logged

with logged(snakemake):
    from synthrisk.report.summary import write_summary

    write_summary(snakemake.input.rapid_max, snakemake.input.mia, snakemake.input.thresholds,
                  snakemake.input.utility, snakemake.input.status, snakemake.params.specs,
                  snakemake.params.tables, snakemake.params.figures)
